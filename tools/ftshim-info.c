/* ftshim-info: what ftshim is installed here and how to run a program
 * under it, in the manner of ompi_info; with --check, whether this
 * environment and node are ready for a job. The listing gives the
 * version, the library of each MPI flavour found beside this program with
 * the launch lines it needs, and every FTSHIM_* variable from the one
 * table (src/config_vars.h). --check parses the FTSHIM_* variables set
 * with the library's own code (src/config.c, src/preflight.c), checks each
 * library's file and dependencies, the run directory this environment
 * gives, and the launchers on PATH: one line each. See ftshim-info(1). */
#include "ftshim_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/config.h"
#include "src/preflight.h"
#include "src/prune.h"

extern char **environ;

#define PROG "ftshim-info"
#define ACCEPTED "accepted: --check, --libdir DIR, --help, --version"
#define MAX_SHIMS 16

/* One way to launch a job with the shim: before + library + after. */
struct launch {
	const char *label;
	const char *before, *after;
};

/* What each MPI needs, as docs/running.md says. Under srun the run
 * directory is set: --export=ALL carries XDG_RUNTIME_DIR from the login
 * node, and the default made from it may not exist on a compute node. */
#define SRUN_AFTER ",FTSHIM_RUNDIR=/tmp/ftshim-$USER -n N ./app"

struct flavour {
	const char *name; /* configure --with-mpi's word: the library's directory */
	struct launch launch[2];
	const char *launchers[4]; /* looked for on PATH; NULL-terminated */
};

static const struct flavour flavours[] = {
	{ "mpich",
	  { { "Hydra", "mpiexec.hydra -disable-auto-cleanup -genv LD_PRELOAD ", " -n N ./app" },
	    { "Slurm", "srun --mpi=pmi2 --export=ALL,LD_PRELOAD=", SRUN_AFTER } },
	  { "mpiexec.hydra", "srun", NULL } },
	{ "openmpi",
	  { { "Open MPI", "mpirun.openmpi --enable-recovery -x LD_PRELOAD=", " -n N ./app" },
	    { "Slurm", "srun --mpi=pmix --export=ALL,LD_PRELOAD=", SRUN_AFTER } },
	  { "mpirun.openmpi", "srun", NULL } },
};

/* A build for another MPI (configure --with-mpi=PREFIX): its launcher,
 * whose options we do not know. */
static const struct flavour other_flavour = {
	"other",
	{ { "Launch", "LD_PRELOAD=",
	    " mpiexec -n N ./app  (plus your launcher's option that keeps the job running when a rank dies)" } },
	{ "mpiexec", "mpirun", "srun", NULL },
};

/* Where the libraries were looked for. */
enum lib_source {
	FROM_INSTALLATION, /* PREFIX/lib/ftshim beside this program's PREFIX/bin */
	FROM_BUILD_TREE,   /* the build directory this program was built in */
	FROM_OPTION,       /* --libdir */
};

struct shim {
	char flavour[NAME_MAX + 1];
	char path[PATH_MAX];
	const struct flavour *how;
};

struct shims {
	enum lib_source source;
	char dir[PATH_MAX];   /* PREFIX/lib/ftshim, or the build directory */
	char pcdir[PATH_MAX]; /* PREFIX/lib/pkgconfig; "" for a build tree */
	struct shim shim[MAX_SHIMS];
	size_t n;
};

static int problems; /* --check: how many checks failed */

static void usage(void)
{
	printf("Usage: ftshim-info [--check] [--libdir DIR]\n"
	       "       ftshim-info --help | --version\n"
	       "\n"
	       "Without --check: ftshim's version; each MPI flavour whose libftshim.so is\n"
	       "installed beside this program, with the library to preload and the launch\n"
	       "lines it needs; and every FTSHIM_* variable, its default and what it accepts.\n"
	       "\n"
	       "Options:\n"
	       "  --check       check this environment and node instead, one line per check\n"
	       "                (\"ok: ...\" or \"problem: ...\"): the FTSHIM_* variables set,\n"
	       "                read as MPI_Init reads them; each library's file and its\n"
	       "                dependencies; the run directory; the launchers on PATH\n"
	       "  --libdir DIR  look for the libraries in DIR/FLAVOUR/libftshim.so (DIR is an\n"
	       "                installation's PREFIX/lib/ftshim) instead of beside this\n"
	       "                program (from a build directory: its .libs/libftshim.so)\n"
	       "  --help        print this and exit\n"
	       "  --version     print the version and exit\n"
	       "\n"
	       "Exit status: 0 listed, or every check passed; 1 a check failed; 2 a usage\n"
	       "error.\n");
}

/* prefix, the formatted text and a newline, on f. */
static void vline(FILE *f, const char *prefix, const char *fmt, va_list ap) FT_PRINTF(3, 0);
static void vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
}

static void usage_error(const char *fmt, ...) FT_PRINTF(1, 2) __attribute__((noreturn));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(stderr, PROG ": ", fmt, ap);
	va_end(ap);
	exit(2);
}

/* One line of --check, "ok: ..." or "problem: ..." (counted). */
static void say(bool passed, const char *fmt, ...) FT_PRINTF(2, 3);
static void say(bool passed, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(stdout, passed ? "ok: " : "problem: ", fmt, ap);
	va_end(ap);
	problems += !passed;
}
#define ok(...) say(true, __VA_ARGS__)
#define problem(...) say(false, __VA_ARGS__)

/* Add an item to the comma-separated list in buf (size len), cut to fit. */
static void list_add(char *buf, size_t len, const char *fmt, ...) FT_PRINTF(3, 4);
static void list_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;

	if (at && at + 2 < len) {
		memcpy(buf + at, ", ", 3);
		at += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
}

/* Cut path at its last '/', keeping "/" for the root; false if it has none. */
static bool strip_last(char *path)
{
	char *slash = strrchr(path, '/');

	if (!slash)
		return false;
	if (slash == path)
		slash[1] = '\0';
	else
		*slash = '\0';
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* --- where the libraries are ------------------------------------------- */

/* The directory this program runs from, resolved; "" if unknown. */
static void exe_dir(char *out, size_t outlen)
{
	ssize_t n = readlink("/proc/self/exe", out, outlen - 1);

	out[n > 0 ? (size_t)n : 0] = '\0';
	if (!strip_last(out))
		out[0] = '\0';
}

/* This program in BUILD/tools (or BUILD/tools/.libs under a libtool
 * wrapper) of a configured build directory: BUILD in out. */
static bool find_build_tree(const char *dir, char *out, size_t outlen)
{
	char up[PATH_MAX], probe[PATH_MAX + 16];
	const char *base;

	snprintf(up, sizeof up, "%s", dir);
	base = strrchr(up, '/');
	if (base && strcmp(base, "/.libs") == 0) {
		strip_last(up);
		base = strrchr(up, '/');
	}
	if (!base || strcmp(base, "/tools") != 0 || !strip_last(up))
		return false;
	snprintf(probe, sizeof probe, "%s/config.status", up);
	if (access(probe, F_OK) != 0)
		return false;
	snprintf(out, outlen, "%s", up);
	return true;
}

/* The installation's PREFIX/lib/ftshim seen from dir, where this program
 * runs: the configured one when dir is the configured bindir; else dir in
 * the place of the bindir, with libdir in the same relation to it (a moved
 * prefix, a DESTDIR staging). */
static void installed_libdir(const char *dir, char *out, size_t outlen)
{
	const char *bin = FT_BINDIR, *lib = FT_LIBDIR;
	char real[PATH_MAX], base[PATH_MAX];
	size_t common = 0, i = 0;

	if (!dir[0] || (realpath(bin, real) && strcmp(real, dir) == 0))
		goto configured;
	/* The directories bin and lib share, whole components only. */
	for (; bin[i] && bin[i] == lib[i]; i++)
		if (bin[i] == '/')
			common = i;
	if ((bin[i] == '\0' || bin[i] == '/') && (lib[i] == '\0' || lib[i] == '/'))
		common = i;
	snprintf(base, sizeof base, "%s", dir);
	for (const char *p = bin + common; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/' && !strip_last(base))
			goto configured;
	int n = snprintf(out, outlen, "%s%s/ftshim", strcmp(base, "/") == 0 ? "" : base, lib + common);
	if (n > 0 && (size_t)n < outlen)
		return;
configured:
	snprintf(out, outlen, "%s/ftshim", lib);
}

static const struct flavour *flavour_named(const char *name)
{
	for (size_t i = 0; i < FT_ARRAY_SIZE(flavours); i++)
		if (strcmp(flavours[i].name, name) == 0)
			return &flavours[i];
	return &other_flavour;
}

static void add_shim(struct shims *s, const char *flavour, const char *path)
{
	struct shim *m = &s->shim[s->n++];

	snprintf(m->flavour, sizeof m->flavour, "%s", flavour);
	snprintf(m->path, sizeof m->path, "%s", path);
	m->how = flavour_named(flavour);
}

/* Every DIR/FLAVOUR/libftshim.so, by flavour name. */
static void scan_libdir(struct shims *s)
{
	struct dirent **names;
	char path[PATH_MAX + NAME_MAX + 16];
	struct stat st;
	int n = scandir(s->dir, &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s/libftshim.so", s->dir, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && s->n < MAX_SHIMS && stat(path, &st) == 0)
			add_shim(s, names[i]->d_name, path);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

static void find_shims(struct shims *s, const char *option)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	memset(s, 0, sizeof *s);
	exe_dir(dir, sizeof dir);
	if (option) {
		s->source = FROM_OPTION;
		snprintf(s->dir, sizeof s->dir, "%s", option);
	} else if (find_build_tree(dir, s->dir, sizeof s->dir)) {
		/* Its library, built or not yet: --check says which. */
		s->source = FROM_BUILD_TREE;
		snprintf(path, sizeof path, "%s/.libs/libftshim.so", s->dir);
		add_shim(s, FT_MPI_FLAVOUR, path);
		return;
	} else {
		s->source = FROM_INSTALLATION;
		installed_libdir(dir, s->dir, sizeof s->dir);
	}
	snprintf(s->pcdir, sizeof s->pcdir, "%s", s->dir);
	strip_last(s->pcdir);
	snprintf(s->pcdir + strlen(s->pcdir), sizeof s->pcdir - strlen(s->pcdir), "/pkgconfig");
	scan_libdir(s);
}

static const char *source_text(const struct shims *s)
{
	switch (s->source) {
	case FROM_BUILD_TREE:
		return "build directory, not installed";
	case FROM_OPTION:
		return "--libdir";
	case FROM_INSTALLATION:
		break;
	}
	return "installed";
}

/* --- the listing -------------------------------------------------------- */

static void print_variables(void)
{
	char accepted[256];
	int wname = (int)strlen("VARIABLE"), wdef = (int)strlen("DEFAULT");

	for (size_t i = 0; i < ft_config_var_count; i++) {
		const struct ft_config_var *v = &ft_config_vars[i];
		if ((int)strlen(v->name) > wname)
			wname = (int)strlen(v->name);
		if ((int)strlen(v->def) > wdef)
			wdef = (int)strlen(v->def);
	}
	printf("\nFTSHIM_* variables, read at MPI_Init (what each does: man 7 ftshim):\n");
	printf("  %-*s  %-*s  %s\n", wname, "VARIABLE", wdef, "DEFAULT", "ACCEPTED");
	for (size_t i = 0; i < ft_config_var_count; i++) {
		const struct ft_config_var *v = &ft_config_vars[i];
		if (i == 0 || strcmp(v->group, ft_config_vars[i - 1].group) != 0)
			printf(" %s:\n", v->group);
		ft_config_describe_accepted(v, accepted, sizeof accepted);
		printf("  %-*s  %-*s  %s\n", wname, v->name, wdef, v->def[0] ? v->def : "unset", accepted);
	}
}

static void print_listing(const struct shims *s)
{
	char pc[PATH_MAX + NAME_MAX + 32];

	printf("ftshim %s\n", PACKAGE_VERSION);
	printf("libraries: %s (%s)\n", s->dir, source_text(s));
	for (size_t i = 0; i < s->n; i++) {
		const struct shim *m = &s->shim[i];
		printf("\n%s: %s\n", m->flavour, m->path);
		snprintf(pc, sizeof pc, "%s/ftshim-%s.pc", s->pcdir, m->flavour);
		if (s->pcdir[0] && access(pc, R_OK) == 0)
			printf("  %-11s ftshim-%s (%s)\n", "pkg-config:", m->flavour, pc);
		for (size_t j = 0; j < FT_ARRAY_SIZE(m->how->launch) && m->how->launch[j].label; j++) {
			const struct launch *l = &m->how->launch[j];
			char label[32];
			snprintf(label, sizeof label, "%s:", l->label);
			printf("  %-11s %s%s%s\n", label, l->before, m->path, l->after);
		}
	}
	if (s->n == 0)
		printf("\nno libftshim.so in %s/*/ (make install puts each MPI's in "
		       "PREFIX/lib/ftshim/FLAVOUR/; --libdir DIR looks elsewhere)\n",
		       s->dir);
	printf("\nAcross hosts, pass the FTSHIM_* variables to the ranks too: -genv NAME VALUE\n"
	       "(Hydra), -x NAME (Open MPI); srun's --export=ALL carries them.\n");
	print_variables();
}

/* --- the checks --------------------------------------------------------- */

/* The FTSHIM_* variables, in the order MPI_Init reads them and with its
 * lines (the first mistake only, as there). Sets *disabled. */
static void check_variables(bool *disabled)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX], set[FT_CONFIG_ERR_MAX] = "", later[64] = "";

	*disabled = false;
	if (ft_config_load(&cfg, environ, err, sizeof err) != 0) {
		problem("%s", err);
		return;
	}
	if (cfg.disable) {
		*disabled = true;
		ok("FTSHIM_DISABLE=%s: ftshim is a pass-through and reads no other variable",
		   getenv("FTSHIM_DISABLE"));
		return;
	}
	/* A name far from every variable's only warns, as at MPI_Init. */
	if (ft_preflight_unknown(environ, err, sizeof err) > 0)
		printf("%s\n", err);
	if (ft_preflight_log_file(&cfg, err, sizeof err) != 0 ||
	    ft_preflight_iface(&cfg, err, sizeof err) != 0) {
		problem("%s", err);
		return;
	}
	for (size_t i = 0; i < ft_config_var_count; i++)
		if (getenv(ft_config_vars[i].name))
			list_add(set, sizeof set, "%s", ft_config_vars[i].name);
	/* Their languages are checked at MPI_Init, against the job's MPI and
	 * size (the calls FTSHIM_INJECT may name depend on the MPI). */
	if (cfg.inject[0])
		list_add(later, sizeof later, "FTSHIM_INJECT");
	if (cfg.replicas[0])
		list_add(later, sizeof later, "FTSHIM_REPLICAS");
	if (!set[0])
		ok("FTSHIM_* variables: none set; every default applies");
	else
		ok("FTSHIM_* variables: %s set, all accepted%s%s%s", set,
		   later[0] ? " (MPI_Init checks what " : "", later, later[0] ? " says against the job)" : "");
}

/* ldd's report on lib, with its output (stdout and stderr, cut at outlen)
 * in out: its exit status, or -errno if it could not run. ldd runs the
 * dynamic loader in trace mode, which maps the library and its
 * dependencies and runs none of their code; dlopen would run the shim's
 * constructor. */
static int run_ldd(const char *lib, char *out, size_t outlen)
{
	char *argv[] = { "ldd", (char *)lib, NULL };
	char sink[512];
	posix_spawn_file_actions_t fa;
	size_t used = 0;
	int fds[2], rc, status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	rc = posix_spawnp(&pid, "ldd", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return -rc;
	}
	for (;;) {
		/* Past outlen the rest is read and dropped, so ldd never blocks. */
		bool room = used + 1 < outlen;
		ssize_t n = read(fds[0], room ? out + used : sink, room ? outlen - 1 - used : sizeof sink);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (room)
			used += (size_t)n;
	}
	out[used] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The file is an ELF object we can read: 0, or the reason in why. */
static int check_file(const char *path, char *why, size_t whylen)
{
	unsigned char magic[4];
	struct stat st;
	int fd;

	if (stat(path, &st) != 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot be read: %s", strerror(errno));
		return -1;
	}
	ssize_t n = read(fd, magic, sizeof magic);
	close(fd);
	if (n != (ssize_t)sizeof magic || memcmp(magic, "\177ELF", 4) != 0) {
		snprintf(why, whylen, "not an ELF shared library");
		return -1;
	}
	return 0;
}

static void check_shim(const struct shim *m)
{
	char out[16384], why[256], missing[512] = "";
	size_t ndeps = 0;
	int rc;

	if (check_file(m->path, why, sizeof why) != 0) {
		problem("%s library %s: %s", m->flavour, m->path, why);
		return;
	}
	rc = run_ldd(m->path, out, sizeof out);
	if (rc < 0) {
		problem("%s library %s: cannot run ldd to check its dependencies: %s", m->flavour, m->path,
			strerror(-rc));
		return;
	}
	/* Lines "\tNAME => PATH (ADDRESS)" or "\tNAME => not found". */
	char *save;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		char *arrow = strstr(line, " => ");
		if (!arrow)
			continue;
		*arrow = '\0';
		const char *target = arrow + 4;
		if (strncmp(target, "not found", 9) == 0) {
			list_add(missing, sizeof missing, "%s", line);
			continue;
		}
		ndeps++;
	}
	if (missing[0])
		problem("%s library %s: %s not found (ldd; LD_LIBRARY_PATH=%s)", m->flavour, m->path, missing,
			getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "unset");
	else if (rc != 0)
		problem("%s library %s: ldd: %s", m->flavour, m->path, out + strspn(out, " \t"));
	else
		ok("%s library %s: dependencies resolve (%zu)", m->flavour, m->path, ndeps);
}

/* The run directory MPI_Init would use here: it makes the last component
 * if missing (mode 0700), then a directory per job in it. The check makes
 * a directory and a file in it as a job would, and removes what it made. */
static void check_rundir(void)
{
	const char *configured = getenv("FTSHIM_RUNDIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	const char *rule = configured && configured[0] ? "FTSHIM_RUNDIR"
			   : xdg && xdg[0]             ? "$XDG_RUNTIME_DIR/ftshim"
						       : "/tmp/ftshim-UID";
	/* A default that fails here (XDG_RUNTIME_DIR carried from another
	 * host, typically) is overridden, not fixed. */
	const char *hint = strcmp(rule, "FTSHIM_RUNDIR") == 0
				   ? ""
				   : "; set FTSHIM_RUNDIR to a directory this node can make (/tmp/ftshim-$USER)";
	char base[PATH_MAX], probe[PATH_MAX + 32], file[PATH_MAX + 48], parent[PATH_MAX];
	bool made = false;
	int fd, err;

	ft_rundir_base(configured, base, sizeof base);
	err = mkdir(base, 0700) == 0 ? 0 : errno;
	if (err == 0) {
		made = true;
	} else if (err == ENOENT || err == ENOTDIR) {
		snprintf(parent, sizeof parent, "%s", base);
		strip_last(parent);
		problem("run directory %s (%s): cannot be made: its parent %s %s%s", base, rule, parent,
			err == ENOENT ? "does not exist (ftshim makes the last component only)"
				      : "is not a directory",
			hint);
		return;
	} else if (err != EEXIST) {
		problem("run directory %s (%s): cannot be made: %s%s", base, rule, strerror(err), hint);
		return;
	} else if (!is_dir(base)) {
		problem("run directory %s (%s): exists and is not a directory%s", base, rule, hint);
		return;
	}
	snprintf(probe, sizeof probe, "%s/.ftshim-info-XXXXXX", base);
	if (!mkdtemp(probe)) {
		problem("run directory %s (%s): a job's directory cannot be made in it: %s%s", base, rule,
			strerror(errno), hint);
		goto out_base;
	}
	snprintf(file, sizeof file, "%s/ranks", probe);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, "\n", 1) != 1)
		problem("run directory %s (%s): a job's file cannot be written in it: %s%s", base, rule,
			strerror(errno), hint);
	else
		ok("run directory %s (%s): writable", base, rule);
	if (fd >= 0) {
		close(fd);
		unlink(file);
	}
	rmdir(probe);
out_base:
	if (made)
		rmdir(base);
}

/* The first executable NAME in PATH's directories (an empty one is the
 * current directory), in out. */
static bool find_on_path(const char *name, char *out, size_t outlen)
{
	const char *p = getenv("PATH");
	struct stat st;

	while (p && *p) {
		size_t len = strcspn(p, ":");
		snprintf(out, outlen, "%.*s/%s", len ? (int)len : 1, len ? p : ".", name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

static void check_launchers(const struct shim *m)
{
	char found[1024] = "", absent[256] = "", path[PATH_MAX];

	for (const char *const *name = m->how->launchers; *name; name++) {
		if (find_on_path(*name, path, sizeof path))
			list_add(found, sizeof found, "%s (%s)", *name, path);
		else
			list_add(absent, sizeof absent, "%s", *name);
	}
	if (!found[0])
		problem("%s launchers: none on PATH (looked for %s)", m->flavour, absent);
	else
		ok("%s launchers on PATH: %s%s%s", m->flavour, found, absent[0] ? "; not on PATH: " : "", absent);
}

static int run_checks(const struct shims *s)
{
	bool disabled;

	check_variables(&disabled);
	if (s->n == 0)
		problem("no libftshim.so in %s/*/ (%s; make install puts each MPI's in "
			"PREFIX/lib/ftshim/FLAVOUR/; --libdir DIR looks elsewhere)",
			s->dir, source_text(s));
	for (size_t i = 0; i < s->n; i++)
		check_shim(&s->shim[i]);
	if (disabled)
		ok("run directory: not used (FTSHIM_DISABLE)");
	else
		check_rundir();
	for (size_t i = 0; i < s->n; i++)
		check_launchers(&s->shim[i]);
	return problems ? 1 : 0;
}

int main(int argc, char **argv)
{
	bool check = false, help = false, version = false;
	const char *libdir = NULL;
	struct shims shims;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--check") == 0)
			check = true;
		else if (strcmp(a, "--libdir") == 0)
			libdir = i + 1 < argc ? argv[++i] : "";
		else if (strncmp(a, "--libdir=", 9) == 0)
			libdir = a + 9;
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			help = true;
		else if (strcmp(a, "--version") == 0)
			version = true;
		else if (a[0] == '-')
			usage_error("unknown option '%s'; " ACCEPTED, a);
		else
			usage_error("unexpected argument '%s'; " ACCEPTED, a);
	}
	if (libdir && !libdir[0])
		usage_error("--libdir needs a directory: PREFIX/lib/ftshim");
	if (libdir && !is_dir(libdir))
		usage_error("--libdir %s: %s; accepted: a directory, PREFIX/lib/ftshim",
			    libdir, libdir[0] && access(libdir, F_OK) == 0 ? "not a directory" : "no such directory");
	if (help) {
		usage();
		return 0;
	}
	if (version) {
		printf("%s (ftshim) %s\n", PROG, PACKAGE_VERSION);
		return 0;
	}
	find_shims(&shims, libdir);
	if (check)
		return run_checks(&shims);
	print_listing(&shims);
	return 0;
}
