/* repl_log.h: what a process of a replicated job remembers about its
 * messages, so that when a copy of a logical rank dies the survivors can
 * hand each other what it would have given them, exactly once
 * (PartRePer VI-B; pmpi/mode/replication/counts.c runs the exchange). Two parts:
 *
 * - counts: per (communicator, logical peer, tag), how many messages this
 *   logical rank sent to the peer with that tag, how many it matched from
 *   the peer, and how many of its next sends a copy of the peer already
 *   has from elsewhere (skips). Messages between two processes on one
 *   communicator with one tag are matched in the order they were sent
 *   (MPI's non-overtaking rule), so "the first k messages of tag t" names
 *   exactly the ones received, whatever order the tags interleave in.
 *
 * - the send log: the packed bytes of each message sent, with its key and
 *   number, oldest first, within a byte budget; the oldest go first when
 *   it is exceeded, and a resend that needs one of them finds it missing.
 *
 * Pure: no MPI, no locks. One thread (the program's) uses a table and a
 * log. Functions returning int give 0 or a negative errno. */
#ifndef FTSHIM_REPL_LOG_H
#define FTSHIM_REPL_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which copy of a peer a skip applies to. */
enum ft_copy_slot { FT_SLOT_PRIMARY = 0, FT_SLOT_REPLICA = 1 };

struct ft_msg_counts {
	uint64_t comm; /* the communicator's job-wide id */
	int32_t peer;  /* a logical rank in it */
	int32_t tag;
	uint64_t sent;	   /* messages sent to peer with tag, numbered 1..sent */
	uint64_t received; /* messages with tag matched from peer */
	/* Sends numbered up to skip[slot] are not sent to that copy of the
	 * peer: it received them from this rank's other copy. */
	uint64_t skip[2];
};

struct ft_msg_table {
	struct ft_msg_counts *slots; /* open addressing; comm == 0 and peer == -1: empty */
	size_t cap, used;	     /* cap a power of two, or 0 */
};

void ft_msg_table_init(struct ft_msg_table *t);
void ft_msg_table_fini(struct ft_msg_table *t);

/* The counts of (comm, peer, tag), made zero if new; NULL if out of
 * memory. comm must not be 0 or peer negative. Pointers stay valid until
 * the next ft_msg_counts_get or ft_msg_table_drop_comm. */
struct ft_msg_counts *ft_msg_counts_get(struct ft_msg_table *t, uint64_t comm, int32_t peer,
					int32_t tag);
/* The counts of (comm, peer, tag) if there are any, else NULL. */
const struct ft_msg_counts *ft_msg_counts_find(const struct ft_msg_table *t, uint64_t comm,
					       int32_t peer, int32_t tag);
/* Call fn on each entry with this peer (any communicator, any tag), in
 * no particular order. */
void ft_msg_table_each_peer(struct ft_msg_table *t, int32_t peer,
			    void (*fn)(struct ft_msg_counts *c, void *arg), void *arg);
/* Forget every entry of a communicator (it was freed). */
void ft_msg_table_drop_comm(struct ft_msg_table *t, uint64_t comm);

struct ft_logged {
	struct ft_logged *next; /* newer */
	uint64_t comm;
	int32_t peer, tag;
	uint64_t seq; /* its number among the sends to (comm, peer, tag) */
	size_t len;
	unsigned char data[]; /* len bytes */
};

struct ft_send_log {
	struct ft_logged *oldest, *newest;
	size_t bytes;	/* data bytes held */
	size_t budget;	/* the most held after an append */
	uint64_t dropped; /* messages dropped to stay within it */
};

void ft_send_log_init(struct ft_send_log *log, size_t budget);
void ft_send_log_fini(struct ft_send_log *log);
/* Room for a message of len bytes, appended as the newest entry (fill
 * its data); older entries go first while the log would exceed its
 * budget. NULL if out of memory or len alone exceeds the budget: the
 * message is then not logged (a resend that needs it finds it missing). */
struct ft_logged *ft_send_log_append(struct ft_send_log *log, uint64_t comm, int32_t peer,
				     int32_t tag, uint64_t seq, size_t len);
/* Call fn, oldest first, on each entry to (comm, peer) whose number is
 * past after(tag, arg), the count the peer's copy has of that tag.
 * Returns how many. */
size_t ft_send_log_each_after(const struct ft_send_log *log, uint64_t comm, int32_t peer,
			      uint64_t (*after)(int32_t tag, void *arg),
			      void (*fn)(const struct ft_logged *m, void *arg), void *arg);
/* Forget every entry of a communicator. */
void ft_send_log_drop_comm(struct ft_send_log *log, uint64_t comm);

#endif
