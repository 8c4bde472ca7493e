/* shrink_window.c: a member dies inside MPIX_Comm_shrink, and the
 * survivors go on with a communicator that works like any other.
 *
 * 6 ranks. FTSHIM_INJECT kills rank 5 after its first MPI_Barrier and
 * rank VICTIM (argument; default 3) at ftshim's own injection point
 * ftshim.shrink:1, right after its first shrink's agreement is decided,
 * while the others are still inside the shrink. The survivors: barrier on
 * a duplicate of the world until it fails, revoke, shrink (mode "ishrink":
 * MPIX_Comm_ishrink and MPI_Wait), which must succeed, with VICTIM a
 * member; then the ULFM loop (an MPI_Allreduce, in mode "ishrink" an
 * MPI_Iallreduce and MPI_Wait, and on its failure revoke and shrink
 * again) until a communicator of the 4 live ranks works. On it,
 * each check compares with what MPI defines: ranks in the parent's order,
 * MPI_Comm_group, every blocking collective (rooted ones at a root other
 * than 0, v forms, MPI_IN_PLACE, a non-commutative user operation),
 * point-to-point in a ring (MPI_Sendrecv, MPI_ANY_SOURCE with the status
 * translated, MPI_ANY_TAG), MPI_Comm_dup and MPI_Comm_split of it and a
 * collective there, MPIX_Comm_agree, an attribute and a name,
 * nonblocking collectives completed by MPI_Waitall with point-to-point
 * between, a window (MPI_Put to the right neighbour), a Cartesian ring
 * (MPI_Cart_create, made on the view's base) with a shift and an
 * exchange, and graph rings (MPI_Graph_create and
 * MPI_Dist_graph_create_adjacent, made on the base too) whose neighbours
 * are the view's ranks, with an exchange; with --mpi-last
 * (FTSHIM_RECOVERY_CONTEXTS=1: the second shrink is the MPI's), the same
 * on the MPI's communicator. Survivor rank 0
 * prints ALL CHECKS PASSED.
 *
 * Usage: shrink_window shrink|ishrink VICTIM [--mpi-last] */
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

#define N 6

/* a op b, kept in rank order: a matrix-like non-commutative combination
 * (x, y) . (u, v) = (x * u, x * v + y) on pairs of ints. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *type)
{
	int *a = in, *b = inout;

	(void)type;
	for (int i = 0; i < *len; i++) {
		int x = a[2 * i], y = a[2 * i + 1], u = b[2 * i], v = b[2 * i + 1];
		b[2 * i] = x * u;
		b[2 * i + 1] = x * v + y;
	}
}

static int shrink(MPI_Comm comm, MPI_Comm *out, int nonblocking)
{
	MPI_Request req;
	int rc;

	if (!nonblocking)
		return MPIX_Comm_shrink(comm, out);
	rc = MPIX_Comm_ishrink(comm, out, &req);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	return rc;
}

/* The checks on s, the 4 survivors' communicator; world_of[r]: the world
 * rank of s's rank r. */
static void check_comm(MPI_Comm s, const int *world_of)
{
	int rank, size, wrank, v, sum = 0;

	MPI_Comm_rank(s, &rank);
	MPI_Comm_size(s, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	TU_CHECK(size == 4 && world_of[rank] == wrank, "rank %d of %d at world rank %d", rank, size,
		 wrank);

	MPI_Group g, wg;
	int ranks[4] = { 0, 1, 2, 3 }, tr[4];
	MPI_Comm_group(s, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Group_translate_ranks(g, 4, ranks, wg, tr);
	for (int i = 0; i < 4; i++)
		TU_CHECK(tr[i] == world_of[i], "group member %d is world rank %d", i, tr[i]);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);

	TU_CHECK(MPI_Barrier(s) == MPI_SUCCESS, "barrier");
	v = rank + 1;
	TU_CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, s) == MPI_SUCCESS && sum == 10,
		 "allreduce %d", sum);
	v = rank == 2 ? 42 : -1;
	MPI_Bcast(&v, 1, MPI_INT, 2, s);
	TU_CHECK(v == 42, "bcast from 2: %d", v);
	int all[4] = { 0 }, mine = 100 + rank;
	MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 1, s);
	if (rank == 1)
		for (int i = 0; i < 4; i++)
			TU_CHECK(all[i] == 100 + i, "gather[%d] %d", i, all[i]);
	int counts[4] = { 1, 2, 1, 2 }, displs[4] = { 0, 1, 3, 4 }, got[6] = { 0 }, two[2];
	two[0] = two[1] = rank;
	MPI_Allgatherv(two, counts[rank], MPI_INT, got, counts, displs, MPI_INT, s);
	TU_CHECK(got[0] == 0 && got[1] == 1 && got[2] == 1 && got[3] == 2 && got[4] == 3 &&
			 got[5] == 3,
		 "allgatherv %d %d %d %d %d %d", got[0], got[1], got[2], got[3], got[4], got[5]);
	int sendall[4], recvall[4];
	for (int i = 0; i < 4; i++)
		sendall[i] = 10 * rank + i;
	MPI_Alltoall(sendall, 1, MPI_INT, recvall, 1, MPI_INT, s);
	for (int i = 0; i < 4; i++)
		TU_CHECK(recvall[i] == 10 * i + rank, "alltoall[%d] %d", i, recvall[i]);
	int part = -1, whole[4] = { 7, 8, 9, 10 };
	MPI_Scatter(whole, 1, MPI_INT, &part, 1, MPI_INT, 3, s);
	TU_CHECK(part == 7 + rank, "scatter %d", part);
	v = rank + 1;
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, s);
	TU_CHECK(v == 4, "in-place max %d", v);
	int pre = -1;
	v = rank + 1;
	MPI_Scan(&v, &pre, 1, MPI_INT, MPI_SUM, s);
	TU_CHECK(pre == (rank + 1) * (rank + 2) / 2, "scan %d", pre);

	MPI_Op op;
	MPI_Datatype pair;
	int in[2] = { rank + 2, rank }, out[2] = { 0, 0 };
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	MPI_Op_create(affine, 0, &op);
	MPI_Allreduce(in, out, 1, pair, op, s);
	/* (2,0).(3,1).(4,2).(5,3) = (120, 2*(3*(4*3+2)+1)+0) */
	TU_CHECK(out[0] == 120 && out[1] == 86, "non-commutative allreduce (%d, %d)", out[0], out[1]);
	MPI_Op_free(&op);
	MPI_Type_free(&pair);

	int right = (rank + 1) % 4, left = (rank + 3) % 4, from = -1;
	MPI_Status st;
	MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &from, 1, MPI_INT, left, 7, s, &st);
	TU_CHECK(from == left && st.MPI_SOURCE == left && st.MPI_TAG == 7, "sendrecv from %d (%d)",
		 from, st.MPI_SOURCE);
	MPI_Request rq;
	MPI_Isend(&rank, 1, MPI_INT, right, 9, s, &rq);
	MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, s, &st);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	TU_CHECK(from == left && st.MPI_SOURCE == left && st.MPI_TAG == 9,
		 "any source: %d from %d, tag %d", from, st.MPI_SOURCE, st.MPI_TAG);

	MPI_Comm d, half;
	MPI_Comm_dup(s, &d);
	int dr = -1, ds = 0;
	MPI_Comm_rank(d, &dr);
	MPI_Comm_size(d, &ds);
	TU_CHECK(dr == rank && ds == 4, "dup: rank %d of %d", dr, ds);
	v = 1;
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, d);
	TU_CHECK(v == 4, "allreduce on the dup: %d", v);
	MPI_Comm_split(s, rank % 2, -rank, &half);
	int hr = -1, hs = 0;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	TU_CHECK(hs == 2 && hr == (rank < 2 ? 1 : 0), "split: rank %d of %d", hr, hs);
	MPI_Comm_free(&half);
	MPI_Comm_free(&d);

	int flag = 1;
	TU_CHECK(MPIX_Comm_agree(s, &flag) == MPI_SUCCESS && flag == 1, "agree");

	int key, *val = NULL, found = 0, len = 0;
	static int attr = 5;
	char name[MPI_MAX_OBJECT_NAME];
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
	MPI_Comm_set_attr(s, key, &attr);
	MPI_Comm_get_attr(s, key, &val, &found);
	TU_CHECK(found && val == &attr, "attribute");
	MPI_Comm_set_name(s, "survivors");
	MPI_Comm_get_name(s, name, &len);
	TU_CHECK(strcmp(name, "survivors") == 0, "name %s", name);
	MPI_Comm_free_keyval(&key);

	/* Nonblocking collectives, with point-to-point while they run. */
	MPI_Request nb[3];
	MPI_Status nbst[3];
	int in1 = rank + 1, sum1 = 0, bv = rank == 1 ? 77 : 0, token = -1;
	TU_CHECK(MPI_Iallreduce(&in1, &sum1, 1, MPI_INT, MPI_SUM, s, &nb[0]) == MPI_SUCCESS &&
			 MPI_Ibcast(&bv, 1, MPI_INT, 1, s, &nb[1]) == MPI_SUCCESS &&
			 MPI_Ibarrier(s, &nb[2]) == MPI_SUCCESS,
		 "starting nonblocking collectives");
	MPI_Sendrecv(&rank, 1, MPI_INT, right, 11, &token, 1, MPI_INT, left, 11, s, MPI_STATUS_IGNORE);
	TU_CHECK(MPI_Waitall(3, nb, nbst) == MPI_SUCCESS && sum1 == 10 && bv == 77 &&
			 token == left,
		 "nonblocking collectives: sum %d, bcast %d, token %d", sum1, bv, token);

	/* A window made from it: ranks are the communicator's. */
	MPI_Win win;
	int *mem = NULL, mine_in = rank;
	/* (Debian's MPICH 4.0.2 loses puts to a window of one int, with or
	 * without ftshim.) */
	TU_CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, s, &mem, &win) ==
			 MPI_SUCCESS,
		 "MPI_Win_allocate");
	*mem = -1;
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	int f1 = MPI_Win_fence(0, win);
	int pr = MPI_Put(&mine_in, 1, MPI_INT, right, 0, 1, MPI_INT, win);
	int f2 = MPI_Win_fence(0, win);
	TU_CHECK(f1 == MPI_SUCCESS && pr == MPI_SUCCESS && f2 == MPI_SUCCESS && *mem == left,
		 "window: fence %d, put %d, fence %d; got %d from the left, %d", f1, pr, f2, *mem,
		 left);
	MPI_Win_free(&win);

	/* A Cartesian ring works on a view (made on its base) as on the
	 * MPI's communicator. */
	MPI_Comm cart = MPI_COMM_NULL;
	int dims[1] = { 4 }, periods[1] = { 1 };
	int crc = MPI_Cart_create(s, 1, dims, periods, 0, &cart);
	TU_CHECK(crc == MPI_SUCCESS, "MPI_Cart_create: %d", crc);
	if (crc == MPI_SUCCESS) {
		int src = -1, dst = -1, me = -1, got = -1;
		MPI_Comm_rank(cart, &me);
		MPI_Cart_shift(cart, 0, 1, &src, &dst);
		int xrc = MPI_Sendrecv(&me, 1, MPI_INT, dst, 5, &got, 1, MPI_INT, src, 5, cart, MPI_STATUS_IGNORE);
		TU_CHECK(xrc == MPI_SUCCESS && src == (me + 3) % 4 && got == src,
			 "Cartesian ring: sendrecv %d, from %d got %d", xrc, src, got);
		MPI_Comm_free(&cart);
	}
	/* Graphs name ranks: on a view they are the view's (its base's), as
	 * on the MPI's communicator. A directed ring: each rank's one edge
	 * goes to the next. */
	MPI_Comm graph = MPI_COMM_NULL;
	int index[4] = { 1, 2, 3, 4 }, edges[4] = { 1, 2, 3, 0 };
	int grc = MPI_Graph_create(s, 4, index, edges, 0, &graph);
	TU_CHECK(grc == MPI_SUCCESS, "MPI_Graph_create: %d", grc);
	if (grc == MPI_SUCCESS) {
		int me = -1, nb = -1, got = -1, nn = -1;
		MPI_Comm_rank(graph, &me);
		MPI_Graph_neighbors_count(graph, me, &nn);
		MPI_Graph_neighbors(graph, me, 1, &nb);
		int xrc = MPI_Sendrecv(&me, 1, MPI_INT, nb, 6, &got, 1, MPI_INT, (me + 3) % 4, 6, graph,
				       MPI_STATUS_IGNORE);
		TU_CHECK(nn == 1 && nb == (me + 1) % 4 && xrc == MPI_SUCCESS && got == (me + 3) % 4,
			 "graph ring: rank %d's neighbour %d (of %d), sendrecv %d, got %d", me, nb, nn, xrc, got);
		MPI_Comm_free(&graph);
	}
	int dme = -1; /* the rank in s */
	MPI_Comm_rank(s, &dme);
	int dfrom = (dme + 3) % 4, dto = (dme + 1) % 4;
	MPI_Comm dist = MPI_COMM_NULL;
	int drc = MPI_Dist_graph_create_adjacent(s, 1, &dfrom, MPI_UNWEIGHTED, 1, &dto, MPI_UNWEIGHTED,
						 MPI_INFO_NULL, 0, &dist);
	TU_CHECK(drc == MPI_SUCCESS, "MPI_Dist_graph_create_adjacent: %d", drc);
	if (drc == MPI_SUCCESS) {
		int src = -1, dst = -1, got = -1, sw = 0, dw = 0;
		/* Weights' arrays, not MPI_UNWEIGHTED: gcc 12 warns of it with Open MPI. */
		MPI_Dist_graph_neighbors(dist, 1, &src, &sw, 1, &dst, &dw);
		int xrc = MPI_Sendrecv(&dme, 1, MPI_INT, dst, 7, &got, 1, MPI_INT, src, 7, dist, MPI_STATUS_IGNORE);
		TU_CHECK(src == dfrom && dst == dto && xrc == MPI_SUCCESS && got == dfrom,
			 "distributed graph ring: from %d to %d, sendrecv %d, got %d", src, dst, xrc, got);
		MPI_Comm_free(&dist);
	}
}

int main(int argc, char **argv)
{
	tu_init(&argc, &argv, N, 1, "6 ranks and ftshim");
	int nonblocking = argc > 1 && strcmp(argv[1], "ishrink") == 0;
	int victim = argc > 2 ? atoi(argv[2]) : 3;
	MPI_Comm work, s = MPI_COMM_NULL;
	int rc, shrinks = 0;

	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD); /* rank 5 dies after it */
	while (MPI_Barrier(work) == MPI_SUCCESS)
		usleep(1000);
	MPIX_Comm_revoke(work);
	rc = shrink(work, &s, nonblocking);
	shrinks++;
	/* The victim died inside that shrink, after its agreement: a member
	 * of s that the ULFM loop below removes. */
	int ssize = 0;
	if (rc == MPI_SUCCESS)
		MPI_Comm_size(s, &ssize);
	TU_CHECK(rc == MPI_SUCCESS && ssize == 5, "the shrink a member died in: rc %d, size %d", rc,
		 ssize);
	MPI_Comm_free(&work);
	while (rc == MPI_SUCCESS) {
		int v = 1, size = 0;
		MPI_Comm_size(s, &size);
		if (nonblocking) {
			MPI_Request r;
			rc = MPI_Iallreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, s, &r);
			if (rc == MPI_SUCCESS)
				rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
		} else {
			rc = MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, s);
		}
		/* Every survivor leaves the loop together (the agreed flag is
		 * the same everywhere, whatever agree returns). */
		int ok = rc == MPI_SUCCESS && v == size;
		MPIX_Comm_agree(s, &ok);
		if (ok)
			break;
		MPI_Comm t;
		MPIX_Comm_revoke(s);
		rc = shrink(s, &t, nonblocking);
		shrinks++;
		MPI_Comm_free(&s);
		s = t;
		if (shrinks > 4)
			break;
	}
	TU_CHECK(rc == MPI_SUCCESS, "the ULFM loop: %d after %d shrinks", rc, shrinks);
	int world_of[4];
	for (int i = 0, k = 0; i < 5; i++)
		if (i != victim)
			world_of[k++] = i;
	check_comm(s, world_of);
	return tu_survivors_finish(MPI_SUCCESS, s, 4);
}
