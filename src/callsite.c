/* callsite.c: the application's call site of an MPI call. libunwind walks
 * the calling thread's stack from the caller upwards; each frame's return
 * address less one byte lies inside its call instruction, which dladdr
 * places in a loaded object (so that ftshim's and the MPI's own frames can
 * be skipped) and libdw maps to the function, file and line of the call.
 *
 * The libdw session (a Dwfl over this process's mappings) is cached rather
 * than built per call: building it reads /proc/self/maps, and the line
 * tables it reads stay loaded for the next failed call, which often comes
 * right after (a loop of receives from a dead neighbour). A mutex guards
 * it, since a Dwfl is not thread-safe, and it is rebuilt whenever the
 * dynamic loader's counts of loaded and unloaded objects change, so that
 * dlopen and dlclose never leave it describing mappings that moved.
 * Finished descriptions are cached too, by address (emptied on the same
 * condition): the symbol lookup reads the object's file each time, and
 * cost more than the rest of a failed call. */
#include "ftshim_config.h"

#define UNW_LOCAL_ONLY /* this process's own stack only: the light libunwind */
#include <libunwind.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

#include "src/callsite.h"
#include "src/common.h"

/* A walk that has not found its frame after this many is on a corrupt or
 * runaway stack: give up rather than follow it further. */
#define MAX_FRAMES 512

#define NAME_LEN 256

/* Which frame a walk describes: the first one, after skip_frames frames,
 * that is neither in the object loaded at inside_base (when not NULL) nor
 * in one whose path contains a string of also_skip (when not NULL). */
struct frame_filter {
	unsigned skip_frames;
	const void *inside_base;
	const char *const *also_skip;
};

/* What is known of one frame; each part may be missing. pc is an address
 * inside the call instruction: ip - 1, unless ip is exact (the frame below
 * was a signal frame, ip the interrupted instruction). The DWARF parts
 * describe pc: function is the innermost one holding it, inlined or not. */
struct frame_desc {
	uintptr_t ip;            /* as unwound */
	uintptr_t pc;            /* ip - 1 for a return address */
	bool have_object;        /* dladdr placed pc in a loaded object */
	const void *object_base; /* where that object is mapped (dli_fbase) */
	uintptr_t load_bias;     /* its l_addr: pc - load_bias is the address in the file */
	char object[PATH_MAX];   /* its path */
	char symbol[NAME_LEN];   /* from the symbol table: the function holding ip */
	uintptr_t symbol_offset; /* ip - symbol's address */
	char function[NAME_LEN]; /* from DWARF */
	char file[NAME_LEN];     /* from DWARF: the source file's base name */
	int line;                /* from DWARF: 0 if unknown */
};

static void FT_PRINTF(3, 4) put(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;

	/* vsnprintf writes nothing for outlen 0 and otherwise truncates and
	 * terminates: exactly the contract of the header. */
	va_start(ap, fmt);
	vsnprintf(out, outlen, fmt, ap);
	va_end(ap);
}

static int unknown(char *out, size_t outlen)
{
	put(out, outlen, "%s", "unknown");
	return -1;
}

/* The path of the object of a dladdr answer. For the main program the
 * loader knows only argv[0], which may be relative or a bare name found
 * through PATH, so ask the kernel. */
static void object_path(const Dl_info *info, const struct link_map *map, char *out, size_t outlen)
{
	if (map->l_name && map->l_name[0] != '\0') {
		put(out, outlen, "%s", map->l_name);
		return;
	}
	ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
	if (n > 0)
		out[n] = '\0';
	else
		put(out, outlen, "%s", info->dli_fname ? info->dli_fname : "?");
}

/* Fill the address and object parts of f from the cursor's frame. ip_exact:
 * the frame below was a signal frame, so ip is the interrupted instruction
 * rather than a return address. */
static void frame_locate(unw_cursor_t *cursor, bool ip_exact, struct frame_desc *f)
{
	unw_word_t ip = 0;
	Dl_info info;
	void *extra = NULL; /* RTLD_DL_LINKMAP: the object's struct link_map */

	memset(f, 0, sizeof *f);
	if (unw_get_reg(cursor, UNW_REG_IP, &ip) != 0)
		return;
	f->ip = (uintptr_t)ip;
	f->pc = ip_exact || ip == 0 ? f->ip : f->ip - 1;
	if (f->ip == 0 || !dladdr1((void *)f->pc, &info, &extra, RTLD_DL_LINKMAP) || !extra)
		return;
	const struct link_map *map = extra;
	f->have_object = true;
	f->object_base = info.dli_fbase;
	f->load_bias = (uintptr_t)map->l_addr;
	object_path(&info, map, f->object, sizeof f->object);
}

static bool filter_skips(const struct frame_filter *filter, const struct frame_desc *f)
{
	if (!f->have_object)
		return false;
	if (filter->inside_base && f->object_base == filter->inside_base)
		return true;
	for (const char *const *s = filter->also_skip; s && *s; s++)
		if (**s && strstr(f->object, *s))
			return true;
	return false;
}

/* The loader's running counts of objects loaded and unloaded (dlpi_adds,
 * dlpi_subs), the same in every entry dl_iterate_phdr gives. */
struct load_counts {
	unsigned long long adds, subs;
};

static int read_load_counts(struct dl_phdr_info *info, size_t size, void *data)
{
	struct load_counts *counts = data;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		counts->adds = info->dlpi_adds;
		counts->subs = info->dlpi_subs;
	}
	return 1; /* the first entry is enough */
}

/* Descriptions already made, by the address they describe: a program
 * that fails calls in a loop (a receive per dead neighbour, a revoked
 * communicator polled) pays for the symbol and line lookups, which read
 * the objects' files, once per call site. Any thread, under cache_lock;
 * emptied when objects were loaded or unloaded since it was filled. */
#define SITE_CACHE 64

struct site_entry {
	uintptr_t pc; /* 0: empty */
	char text[NAME_LEN];
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct site_entry site_cache[SITE_CACHE];
static unsigned site_next;
static struct load_counts cache_counts;

/* Copy the description of pc into out if it is known; true then. */
static bool cache_find(uintptr_t pc, char *out, size_t outlen)
{
	struct load_counts now = { 0, 0 };
	bool found = false;

	dl_iterate_phdr(read_load_counts, &now);
	pthread_mutex_lock(&cache_lock);
	if (now.adds != cache_counts.adds || now.subs != cache_counts.subs) {
		memset(site_cache, 0, sizeof site_cache);
		site_next = 0;
		cache_counts = now;
	}
	for (unsigned i = 0; i < SITE_CACHE && !found; i++) {
		if (site_cache[i].pc == pc) {
			put(out, outlen, "%s", site_cache[i].text);
			found = true;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return found;
}

static void cache_add(uintptr_t pc, const char *text)
{
	pthread_mutex_lock(&cache_lock);
	struct site_entry *e = &site_cache[site_next++ % SITE_CACHE];
	e->pc = pc;
	put(e->text, sizeof e->text, "%s", text);
	pthread_mutex_unlock(&cache_lock);
}

#ifdef HAVE_LIBDW
/* Separate debug information is looked for only where its build ID names
 * it on this machine (/usr/lib/debug/.build-id/). The standard callback,
 * dwfl_standard_find_debuginfo, would go on to download it from a
 * debuginfod server when DEBUGINFOD_URLS is set: minutes, in the middle of
 * an error path. The ELF files themselves come from the paths in
 * /proc/self/maps (dwfl_linux_proc_find_elf), or from memory for the vDSO. */
static const Dwfl_Callbacks session_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_build_id_find_debuginfo,
};

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under session_lock: the cached Dwfl (NULL before the first use, and
 * after a report of the mappings failed), and the load counts when it was
 * reported. */
static Dwfl *session;
static struct load_counts session_counts;

/* The Dwfl over the current mappings, or NULL. session_lock held. */
static Dwfl *session_current(void)
{
	struct load_counts now = { 0, 0 };

	dl_iterate_phdr(read_load_counts, &now);
	if (session && now.adds == session_counts.adds && now.subs == session_counts.subs)
		return session;
	if (session) {
		dwfl_end(session);
		session = NULL;
	}
	Dwfl *dwfl = dwfl_begin(&session_callbacks);
	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	if (dwfl_linux_proc_report(dwfl, getpid()) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		return NULL;
	}
	session = dwfl;
	session_counts = now;
	return session;
}

/* The compilation unit whose code holds pc (an address of the process),
 * and in *bias what to subtract from pc for an address in its DWARF.
 * libdw before 0.191 finds it only through .debug_aranges, which clang
 * does not emit: then walk the module's units and ask each. */
static Dwarf_Die *unit_holding(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, bias);

	if (cu)
		return cu;
	while ((cu = dwfl_module_nextcu(mod, cu, bias)))
		if (dwarf_haspc(cu, pc - *bias) > 0)
			return cu;
	return NULL;
}

/* The innermost function, inlined or not, whose code holds addr (in the
 * unit's DWARF): the one the line belongs to. DW_AT_name may sit on the
 * abstract origin of an inlined or out-of-line instance, hence
 * dwarf_attr_integrate. */
static void innermost_function(Dwarf_Die *cu, Dwarf_Addr addr, char *out, size_t outlen)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr, &scopes);

	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Attribute attr;
		const char *name;

		name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr));
		if (name)
			put(out, outlen, "%s", name);
		break;
	}
	free(scopes);
}

/* Fill the DWARF parts of f, if pc's object has line information. The
 * strings libdw returns belong to the session: copied under the lock. */
static void frame_find_source(struct frame_desc *f)
{
	pthread_mutex_lock(&session_lock);
	Dwfl *dwfl = session_current();
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, f->pc) : NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = mod ? unit_holding(mod, f->pc, &bias) : NULL;
	Dwarf_Line *line = cu ? dwarf_getsrc_die(cu, f->pc - bias) : NULL;
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	int lineno = 0;

	if (file && dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
		const char *slash = strrchr(file, '/');
		put(f->file, sizeof f->file, "%s", slash ? slash + 1 : file);
		f->line = lineno;
		innermost_function(cu, f->pc - bias, f->function, sizeof f->function);
	}
	pthread_mutex_unlock(&session_lock);
}
#endif

/* The C++ runtime's demangler: char *__cxa_demangle(const char *mangled,
 * char *buf, size_t *len, int *status), malloc'ed result. */
typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

bool ft_demangle(const char *name, char *out, size_t outlen)
{
	/* Looked up at each use: a program may load the runtime late (a C++
	 * plug-in), and this is the rare error path. */
	cxa_demangle_fn demangle = NULL;
	char *plain = NULL;
	int status = -1;

	if (strncmp(name, "_Z", 2) == 0) {
		*(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (demangle)
			plain = demangle(name, NULL, NULL, &status);
	}
	bool done = plain && status == 0;
	put(out, outlen, "%s", done ? plain : name);
	free(plain);
	return done;
}

/* Write the description of the cursor's frame, located in f. */
static void frame_describe(unw_cursor_t *cursor, struct frame_desc *f, char *out, size_t outlen)
{
	unw_word_t offset = 0;
	char mangled[NAME_LEN];
	int rc = unw_get_proc_name(cursor, mangled, sizeof mangled, &offset);

	/* -UNW_ENOMEM: the name was truncated, still worth showing. */
	if (rc != 0 && rc != -UNW_ENOMEM)
		mangled[0] = '\0';
	mangled[sizeof mangled - 1] = '\0';
	ft_demangle(mangled, f->symbol, sizeof f->symbol);
	f->symbol_offset = (uintptr_t)offset;
#ifdef HAVE_LIBDW
	frame_find_source(f);
#endif
	const char *name = f->function[0] ? f->function : f->symbol;

	if (f->line > 0 && name[0])
		put(out, outlen, "%s (%s:%d)", name, f->file, f->line);
	else if (f->line > 0)
		put(out, outlen, "0x%" PRIxPTR " (%s:%d)", f->ip - f->load_bias, f->file, f->line);
	else if (f->symbol[0] && f->have_object)
		put(out, outlen, "%s+0x%" PRIxPTR " (%s)", f->symbol, f->symbol_offset, f->object);
	else if (f->symbol[0])
		put(out, outlen, "%s+0x%" PRIxPTR, f->symbol, f->symbol_offset);
	else if (f->have_object)
		put(out, outlen, "0x%" PRIxPTR " (%s)", f->ip - f->load_bias, f->object);
	else
		put(out, outlen, "0x%" PRIxPTR, f->ip);
}

/* From the frame of the public function that set up cursor, step to the
 * first frame above it that the filter accepts and describe it. */
static int walk(unw_cursor_t *cursor, const struct frame_filter *filter, char *out, size_t outlen)
{
	struct frame_desc f;

	for (unsigned n = 0; n < MAX_FRAMES; n++) {
		bool ip_exact = unw_is_signal_frame(cursor) > 0;

		if (unw_step(cursor) <= 0)
			break;
		frame_locate(cursor, ip_exact, &f);
		if (f.ip == 0)
			break;
		if (n < filter->skip_frames || filter_skips(filter, &f))
			continue;
		if (!cache_find(f.pc, out, outlen)) {
			/* Whole in the cache, whatever room the caller has. */
			char whole[NAME_LEN];
			frame_describe(cursor, &f, whole, sizeof whole);
			cache_add(f.pc, whole);
			put(out, outlen, "%s", whole);
		}
		return 0;
	}
	return unknown(out, outlen);
}

/* Both entry points take the context themselves, so that the walk starts
 * in their own frame whatever the compiler does with the static helpers. */
int ft_callsite(const void *inside, const char *const *also_skip, char *out, size_t outlen)
{
	struct frame_filter filter = { .skip_frames = 0, .also_skip = also_skip };
	unw_context_t context;
	unw_cursor_t cursor;
	Dl_info info;

	if (inside && dladdr(inside, &info))
		filter.inside_base = info.dli_fbase;
	if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0)
		return unknown(out, outlen);
	return walk(&cursor, &filter, out, outlen);
}

int ft_callsite_skip(unsigned skip_frames, char *out, size_t outlen)
{
	struct frame_filter filter = { .skip_frames = skip_frames };
	unw_context_t context;
	unw_cursor_t cursor;

	if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0)
		return unknown(out, outlen);
	return walk(&cursor, &filter, out, outlen);
}
