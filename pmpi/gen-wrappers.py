#!/usr/bin/env python3
"""Generate ftshim's mechanical MPI wrappers from pmpi/ftshim-api.tsv.

Reads the table (classes, prototypes, parameter roles, each row's
@mode= role) and the preprocessed mpi.h of the MPI being built against,
derives the large-count row NAME_c of every row NAME whose NAME_c that
mpi.h declares and the table does not list (types from mpi.h, the rest
from NAME's row), fails if that mpi.h declares a function no row
classifies, a row lacks its @mode= role, or a wrapped row lacks a role
its parameters need, and writes:
  wrappers.c   one wrapper per function of a generated class; every body
               has the same shape and calls the class's policy functions
               (pmpi/call.h), so no wrapper carries policy of its own, and
               the seam's translation of each parameter by its role
               (pmpi/seam.h)
  fn_table.h   enum ftp_fn over every wrapped function (generated and hand)
               and the matching name strings, for logging and injection
  mode_calls.h struct ftp_mode_calls: a recovery mode's own forms of the
               calls with a communicator (pmpi/mode/mode.h)
  wrapped.txt  the names of every wrapped function, one per line, for the
               test that checks the library's exported symbols
  mpi_entry.h  struct ftp_mpi_entries: the MPI's own entry point of every
  mpi_entry.c  function its mpi.h declares (ftp_mpi.PMPI_X), found once at
               load with dlsym(RTLD_NEXT): ftshim defines the PMPI_ names of
               what it wraps, so it cannot reach the MPI through them

Usage: gen-wrappers.py TABLE MPI_H_PREPROCESSED OUTDIR
"""

import os
import re
import sys

# Classes whose wrappers this script writes; 'hand' ones exist in pmpi/*.c.
GENERATED = {
    "local", "send", "recv", "iprobe", "ip2p", "msg", "coll", "icoll", "req",
    "create", "dup", "idup", "create_group", "create_inter", "free",
    "win_create", "file_open",
}
# Classes of calls on a window or file (pmpi/objects.h): the object's
# parameter, and the others the policy takes after it.
OBJ_CLASSES = {
    "win_fence": ("MPI_Win", []),
    "win_peer": ("MPI_Win", ["rank"]),
    "win_all": ("MPI_Win", []),
    "win_group": ("MPI_Win", ["group"]),
    "win_epoch": ("MPI_Win", []),
    "rma": ("MPI_Win", ["rank"]),
    "rma_req": ("MPI_Win", ["rank"]),
    "file_coll": ("MPI_File", []),
    "file_icoll": ("MPI_File", []),
    "file_sync": ("MPI_File", []),
    "file_wait": ("MPI_File", []),
}
GENERATED |= set(OBJ_CLASSES)
# Object classes whose calls make a request.
OBJ_REQUESTS = {"rma_req", "file_icoll"}
# The persistent collectives that ftshim makes itself on every
# communicator it tracks (pmpi/persist.h: a shell whose every start is the
# nonblocking collective), so that they are watched as the nonblocking
# ones are; MPICH 4.0.2's own mishandle inactive requests in MPI_Testall
# and MPI_Waitany, which ftshim's waits poll with. MPI-4's names, and
# Open MPI 4.1's MPIX_ ones (pmpi/mpix_decls.h), which take the same
# forms.
SHELLED = {"%s_%s_init" % (p, n) for p in ("MPI", "MPIX") for n in (
    "Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv", "Alltoallw", "Barrier", "Bcast",
    "Exscan", "Gather", "Gatherv", "Reduce", "Reduce_scatter", "Reduce_scatter_block",
    "Scan", "Scatter", "Scatterv")}
# Classes that are not wrapped; each of their rows says why in its note.
UNWRAPPED = {"pass", "unwatched"}
CLASSES = GENERATED | UNWRAPPED | {"hand", "ulfm"}
# Classes whose calls name a communicator the policy must look up.
WITH_COMM = GENERATED - {"msg", "req"} - set(OBJ_CLASSES)
# Blocking classes that run as their nonblocking twin, watched by ftp_block.
TWINNED = {"send", "recv", "coll", "dup", "file_coll"}
# Parameter roles (the table's roles column) and the type each one takes;
# the communicator seam (pmpi/seam.h) translates by role.
ROLE_TYPES = {
    "dest": "int", "source": "int", "root": "int", "rank": "int", "peer_rank": "int",
    "rank_out": "int *", "size_out": "int *", "ranks": "const int []", "ranks_out": "int []",
    "status_out": "MPI_Status *", "statuses_out": "MPI_Status []",
    "other_comm": "MPI_Comm", "comm_out": "MPI_Comm *", "comm_freed": "MPI_Comm *",
    "group": "MPI_Group", "group_out": "MPI_Group *", "procs_out": "MPI_Group *",
}
# What a call is to a recovery mode (the @mode= token every row has;
# pmpi/mode/mode.h, enum ftp_mode_role). On a communicator the active mode
# covers, a generated wrapper hands the call to the mode's form (struct
# ftp_mode_calls, written here to mode_calls.h) or, with none, lets the
# mode say from the role whether it runs as on any communicator.
MODE_ROLES = ("none", "query", "p2p", "coll", "create", "complete", "clock", "onesided", "io",
              "process", "ulfm")
# Ranks going in: translated to the MPI's before the call.
RANKS_IN = {"dest", "source", "root", "rank"}
# Types whose every parameter in a wrapped row must have a role (the
# call's own communicator, the first MPI_Comm, excepted).
ROLE_REQUIRED = {"MPI_Comm", "MPI_Comm *", "MPI_Status *", "MPI_Status []", "MPI_Group",
                 "MPI_Group *"}


def twin_name(name):
    """The nonblocking twin of a blocking MPI function."""
    if name.startswith("MPI_Comm_dup"):
        return "MPI_Comm_i" + name[len("MPI_Comm_"):]
    if name.startswith("MPI_File_"):
        return "MPI_File_i" + name[len("MPI_File_"):]
    base = name[len("MPI_"):]
    return "MPI_I" + base[0].lower() + base[1:]


class TableError(Exception):
    pass


def split_params(text):
    """Split a parameter list at top-level commas."""
    params, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        params.append(cur.strip())
    return [] if params == ["void"] else params


def param_name(param):
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\]\s*)*$", param)
    if not m:
        raise TableError("cannot find the parameter name in '%s'" % param)
    return m.group(1)


def param_type(param):
    return re.sub(r"\s+", " ", param[: param.rfind(param_name(param))]).strip()


class Function:
    def __init__(self, cls, proto, lineno, roles=""):
        m = re.fullmatch(r"\s*(.+?)\s*\b(P?MPIX?_[A-Za-z0-9_]+)\s*\((.*)\)\s*", proto)
        if not m:
            raise TableError("line %d: not a prototype: %s" % (lineno, proto))
        self.cls, self.ret, self.name = cls, m.group(1), m.group(2)
        self.params = split_params(m.group(3))
        self.proto = proto.strip()
        self.lineno = lineno
        self.roles = {}
        self.roles_text = roles
        self.mode = None
        self.base = None  # of a large-count row NAME_c: the row of NAME
        self.note = ""
        for item in roles.split():
            if item.startswith("@"):
                key, sep, value = item[1:].partition("=")
                if key != "mode" or value not in MODE_ROLES or self.mode:
                    raise TableError("line %d: %s: '%s' is not one @mode=ROLE (roles: %s)"
                                     % (lineno, self.name, item, ", ".join(MODE_ROLES)))
                self.mode = value
                continue
            name, sep, role = item.partition("=")
            if not sep or role not in ROLE_TYPES:
                raise TableError("line %d: %s: '%s' is not NAME=ROLE (roles: %s)"
                                 % (lineno, self.name, item, ", ".join(sorted(ROLE_TYPES))))
            self.roles[name] = role
        if not self.mode:
            raise TableError("line %d: %s has no @mode=ROLE (roles: %s)"
                             % (lineno, self.name, ", ".join(MODE_ROLES)))

    def role_type(self, i):
        """The type of parameter i as the roles name it: arrays with []."""
        t = param_type(self.params[i])
        return t + " []" if self.params[i].rstrip().endswith("]") else t

    def check_roles(self):
        """Every role names a parameter of its type; every parameter whose
        type needs a role has one (a wrapped row)."""
        names = self.names()
        for name, role in self.roles.items():
            if name not in names:
                raise TableError("line %d: %s has no parameter '%s' (role %s)"
                                 % (self.lineno, self.name, name, role))
            t = self.role_type(names.index(name))
            if t != ROLE_TYPES[role]:
                raise TableError("line %d: %s: role %s takes %s, '%s' is %s"
                                 % (self.lineno, self.name, role, ROLE_TYPES[role], name, t))
        comms = comm_params(self)
        for i, name in enumerate(names):
            t = self.role_type(i)
            if t in ROLE_REQUIRED and name not in self.roles and not (comms and i == comms[0]):
                raise TableError("line %d: %s: parameter '%s' (%s) needs a role"
                                 % (self.lineno, self.name, name, t))

    def with_role(self, *roles):
        """The names of the parameters with one of these roles, in order."""
        return [n for n in self.names() if self.roles.get(n) in roles]

    def one(self, role):
        found = self.with_role(role)
        if len(found) != 1:
            raise TableError("line %d: %s: class %s needs exactly one parameter of role %s"
                             % (self.lineno, self.name, self.cls, role))
        return found[0]

    def names(self):
        return [param_name(p) for p in self.params]

    def types(self):
        return [param_type(p) for p in self.params]


def read_table(path):
    funcs = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < 2:
                raise TableError("%s:%d: expected 'class<TAB>prototype'" % (path, lineno))
            cls, proto = cols[0].strip(), cols[1]
            roles = " ".join(c for c in cols[2:] if not c.lstrip().startswith("#"))
            if cls not in CLASSES:
                raise TableError("%s:%d: unknown class '%s' (known: %s)"
                                 % (path, lineno, cls, ", ".join(sorted(CLASSES))))
            notes = [c.lstrip("# ").strip() for c in cols[2:] if c.lstrip().startswith("#")]
            if cls in UNWRAPPED and not any(notes):
                raise TableError("%s:%d: a %s row needs a note saying %s" % (
                    path, lineno, cls, "why no other process can make it wait" if cls == "pass"
                    else "what it waits on"))
            fn = Function(cls, proto, lineno, roles)
            fn.note = " ".join(notes)
            if cls in UNWRAPPED and fn.roles:
                raise TableError("%s:%d: %s is not wrapped: parameter roles mean nothing on it"
                                 % (path, lineno, fn.name))
            if cls not in UNWRAPPED:
                fn.check_roles()
            if fn.name in funcs:
                raise TableError("%s:%d: %s is listed twice" % (path, lineno, fn.name))
            funcs[fn.name] = fn
    return funcs


def declared_functions(text):
    """Names of the MPI functions the preprocessed mpi.h declares (from PMPI_*)."""
    return {m.group(1) for m in re.finditer(r"\bP(MPIX?_[A-Za-z0-9_]+)\s*\(", text)}


def declaration(text, name):
    """The return type and parameters of name as the preprocessed mpi.h
    declares it."""
    m = re.search(r"(?:^|[;}])\s*(?:extern\s+)?([A-Za-z_][A-Za-z0-9_ *]*?)\s*\b%s\s*\(" % name,
                  text, re.M)
    if not m:
        raise TableError("mpi.h declares no %s" % name)
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return m.group(1).strip(), split_params(" ".join(text[m.end():i - 1].split()))


def derive_large_count(base, text):
    """The row of base's large-count form NAME_c: base's class, roles, mode
    and note, the types of mpi.h's NAME_c and the names of base, position
    by position."""
    name = base.name + "_c"
    ret, params = declaration(text, name)
    names = base.names()
    if len(params) != len(names):
        raise TableError("line %d: %s has %d parameters in mpi.h, %s has %d: give %s a row"
                         % (base.lineno, name, len(params), base.name, len(names), name))
    protos = []
    for p, n in zip(params, names):
        arrays = re.search(r"(\s*\[[^\]]*\])*\s*$", p).group(0).strip()
        t = param_type(p)
        protos.append("%s%s%s%s" % (t, "" if t.endswith("*") else " ", n, arrays))
    fn = Function(base.cls, "%s %s(%s)" % (ret, name, ", ".join(protos)), base.lineno,
                  base.roles_text)
    fn.base = base
    fn.note = base.note
    if fn.cls not in UNWRAPPED:
        fn.check_roles()
    return fn


def read_rows(table, decls):
    """The rows of table, the derived ones included, and the functions the
    preprocessed mpi.h at decls declares: the table as the build reads it
    (tests/api_complete.py reads it here too)."""
    funcs = read_table(table)
    with open(decls) as f:
        text = f.read()
    declared = declared_functions(text)
    large_count_rows(funcs, text, declared)
    return funcs, declared


def large_count_rows(funcs, text, declared):
    """Every NAME_c that mpi.h declares, that has a base row NAME and no
    row of its own, derived from the base row."""
    for name in sorted(declared):
        base = funcs.get(name[:-len("_c")])
        if name.endswith("_c") and name not in funcs and base:
            funcs[name] = derive_large_count(base, text)
    for name, fn in funcs.items():
        if name.endswith("_c") and not fn.base and name[:-len("_c")] in funcs:
            fn.base = funcs[name[:-len("_c")]]


def comm_params(fn):
    """Indices of the by-value MPI_Comm parameters; the first is the call's."""
    return [i for i, t in enumerate(fn.types()) if t == "MPI_Comm"]


def out_comm_param(fn, handle):
    outs = [n for n, t in zip(fn.names(), fn.types()) if t == handle + " *"]
    if len(outs) != 1:
        raise TableError("line %d: %s: class %s needs exactly one '%s *' parameter"
                         % (fn.lineno, fn.name, fn.cls, handle))
    return outs[0]


def obj_param(fn):
    """The window or file a call of an object class is on."""
    handle = OBJ_CLASSES[fn.cls][0]
    objs = [n for n, t in zip(fn.names(), fn.types()) if t == handle]
    if len(objs) != 1:
        raise TableError("line %d: %s: class %s needs exactly one '%s' parameter"
                         % (fn.lineno, fn.name, fn.cls, handle))
    return objs[0]


def named(fn, wanted_type, wanted_name):
    for n, t in zip(fn.names(), fn.types()):
        if t == wanted_type and n == wanted_name:
            return n
    raise TableError("line %d: %s: class %s needs a parameter '%s %s'"
                     % (fn.lineno, fn.name, fn.cls, wanted_type, wanted_name))


def pre_call(fn):
    """The ftp_pre_* call of a wrapper, with the arguments its class needs
    (ranks as the program gives them: the policy translates what it
    watches)."""
    if fn.cls == "send":
        return "ftp_pre_send(&c, comm, %s)" % fn.one("dest")
    if fn.cls in ("recv", "iprobe"):
        return "ftp_pre_%s(&c, comm, %s)" % (fn.cls, fn.one("source"))
    if fn.cls == "create_group":
        return "ftp_pre_create_group(&c, comm, %s)" % fn.one("group")
    if fn.cls == "create_inter":
        return "ftp_pre_create_inter(&c, comm, %s, %s)" % (fn.one("other_comm"), fn.one("peer_rank"))
    if fn.cls in ("ip2p", "icoll"):
        init = "init_" if is_persistent(fn) else ""
        if fn.cls == "icoll":
            return "ftp_pre_%scoll(&c, comm)" % init
        dest, source = fn.with_role("dest"), fn.with_role("source")
        if fn.name.startswith(("MPI_Psend_init", "MPI_Precv_init")):
            return "ftp_pre_init_part(&c, comm, %s)" % fn.one("dest")
        if dest and source:
            return "ftp_pre_isendrecv(&c, comm, %s, %s)" % (dest[0], source[0])
        if dest:
            return "ftp_pre_%ssend(&c, comm, %s)" % (init or "i", dest[0])
        if source:
            return "ftp_pre_%srecv(&c, comm, %s)" % (init or "i", source[0])
        raise TableError("line %d: %s: class ip2p needs a parameter of role dest or source"
                         % (fn.lineno, fn.name))
    return None


def translated_args(fn, args):
    """The call's arguments with every role that goes in translated by the
    seam (pmpi/seam.h): ranks to the MPI's, other communicators to their
    real handles."""
    names = fn.names()
    for i, n in enumerate(names):
        role = fn.roles.get(n)
        if role in RANKS_IN:
            args[i] = "ftp_rank_in(c.comm, %s)" % n
        elif role == "other_comm":
            args[i] = "ftp_seam_real(%s)" % n
        elif role == "peer_rank":
            args[i] = "ftp_peer_rank_in(%s, %s)" % (fn.one("other_comm"), n)
    return args


def translate_out(fn):
    """Lines after the call: what it returned, in the program's terms."""
    lines = []
    for n in fn.with_role("rank_out"):
        lines.append("\tif (rc == MPI_SUCCESS)\n\t\tftp_rank_out(c.comm, %s);" % n)
    for n in fn.with_role("size_out"):
        lines.append("\tif (rc == MPI_SUCCESS)\n\t\tftp_size_out(c.comm, %s);" % n)
    if fn.cls not in OBJ_CLASSES:  # a file's status holds no rank
        for n in fn.with_role("status_out"):
            lines.append("\tftp_status_out(c.comm, %s);" % n)
    for n in fn.with_role("group_out"):
        lines.append("\trc = ftp_group_out(c.comm, rc, %s);" % n)
    return lines


def has_form(fn):
    """fn has a slot in struct ftp_mode_calls: a wrapped row with a
    communicator, not a large-count one (those go through their base's),
    and with the MPI's types only (run-through stabilization's calls,
    whose types are ftshim's, are not a mode's)."""
    return (fn.cls not in UNWRAPPED and bool(comm_params(fn)) and not fn.base
            and "MPI_Rank_info" not in fn.proto)


def covered(fn, comms):
    """Lines that hand a call on a communicator the active recovery mode
    covers to the mode's form of it or, with none, run it as on any
    communicator or refuse it, as the mode says of its role
    (pmpi/mode/mode.h). A large-count call NAME_c is its base NAME there."""
    if fn.cls not in WITH_COMM:
        return []
    form = fn.base if fn.base and has_form(fn.base) else fn
    lines = ["\tif (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {"]
    if has_form(form):
        lines += ["\t\tconst struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);", ""]
    if form is fn and has_form(fn):
        args = [n for i, n in enumerate(fn.names()) if i != comms[0]]
        lines += ["\t\tif (mode && mode->%s)" % fn.name,
                  "\t\t\treturn mode->%s(%s);" % (fn.name, ", ".join(["&c"] + args))]
    elif form is not fn:
        lines += large_count_form(fn, form, comms)
    as_is = "rc = ftp_cover_as_is(&c, FTP_FN_%s, FTP_ROLE_%s);" % (form.name, form.mode.upper())
    lines += ["\t\t" + ("\t" if lines[-1].endswith("else") else "") + as_is, "\t}"]
    return lines


# Large-count parameters that the base form takes as int.
COUNT_SCALARS = {"MPI_Count", "MPI_Aint"}
COUNT_ARRAYS = {"const MPI_Count []": "ftp_mode_counts_fit", "const MPI_Aint []": "ftp_mode_disps_fit"}


def large_count_form(fn, base, comms):
    """A large-count call through its base's form: every count converted
    to int, or refused with one line when one does not fit. Count arrays
    are as long as the communicator's program size; where that is not
    their length (a root's arrays, a neighbourhood's), and where a count
    comes back (MPI_Pack_c's position), the call is refused."""
    args, scalars, arrays, converted = ["&c"], [], [], True
    for i, n in enumerate(fn.names()):
        if i == comms[0]:
            continue
        tb, tc = base.role_type(i), fn.role_type(i)
        if tb == tc:
            args.append(n)
        elif tb == "int" and tc in COUNT_SCALARS:
            scalars.append(n)
            args.append("(int)%s" % n)
        elif tb == "const int []" and tc in COUNT_ARRAYS:
            arrays.append((n, COUNT_ARRAYS[tc]))
            args.append("%s_int" % n)
        elif tb.startswith("int") and tc.startswith(tuple(COUNT_SCALARS)):
            converted = False
        else:
            raise TableError("line %d: %s: parameter '%s' is %s, %s's is %s: give %s a row"
                             % (fn.lineno, fn.name, n, tc, base.name, tb, fn.name))
    if not converted or (arrays and (fn.with_role("root") or "neighbor_" in fn.name.lower())):
        return ["\t\tif (mode && mode->%s)" % base.name,
                "\t\t\trc = ftp_mode_refuse_because(&c, FTP_MODE_COUNT_NOT_CONVERTED);",
                "\t\telse"]
    call = "return mode->%s(%s);" % (base.name, ", ".join(args))
    fits = ["ftp_mode_count_fits(%s)" % n for n in scalars]
    fits += ["%s(n, %s, %s_int)" % (check, n, n) for n, check in arrays]
    lines = ["\t\tif (mode && mode->%s) {" % base.name]
    if arrays:
        lines += ["\t\t\tint n = ftp_seam_size(c.comm);",
                  "\t\t\tint %s;" % ", ".join("%s_int[n > 0 ? n : 1]" % n for n, _ in arrays),
                  ""]
    if fits:
        lines += ["\t\t\tif (%s)" % " &&\n\t\t\t    ".join(fits),
                  "\t\t\t\t" + call,
                  "\t\t\trc = ftp_mode_refuse_because(&c, FTP_MODE_COUNT_TOO_BIG);"]
    else:
        lines.append("\t\t\t" + call)
    return lines + ["\t\t} else"]


def twin_call(fn, twin, args, req):
    """The call of fn's nonblocking twin on fn's arguments args: the same
    less the status, plus the request req. Returns it and the status (the
    waiting side fills it)."""
    targs = list(args)
    status = "MPI_STATUS_IGNORE"
    if fn.types() and fn.types()[-1] == "MPI_Status *":
        status = targs.pop()
    return "%s(%s)" % (entry(twin), ", ".join(targs + [req])), status


def entry(name):
    """How generated code calls the MPI's own name (MPI_X): its entry point."""
    return "ftp_mpi.P" + name


def is_persistent(fn):
    """MPI_Send_init, MPI_Bcast_init, MPI_Psend_init, ...: requests that stay."""
    return fn.name.endswith("_init") or fn.name.endswith("_init_c")


def status_lines(fn):
    """A NULL status means MPI_STATUS_IGNORE on both MPIs (FTP_STATUS)."""
    lines = []
    for p, n, t in zip(fn.params, fn.names(), fn.types()):
        if t == "MPI_Status *":
            lines.append("\t%s = FTP_STATUS(%s);" % (n, n))
        elif t == "MPI_Status" and p.rstrip().endswith("]"):
            lines.append("\t%s = FTP_STATUSES(%s);" % (n, n))
    return lines


def wrapper(fn, declared):
    if fn.ret != "int":
        raise TableError("line %d: %s returns %s; only int functions can be wrapped"
                         % (fn.lineno, fn.name, fn.ret))
    names = fn.names()
    args = list(names)
    comms = comm_params(fn)
    lines = ["FT_EXPORT %s" % fn.proto, "{",
             "\tstruct ftp_call c = FTP_CALL_INIT(FTP_FN_%s);" % fn.name] + status_lines(fn)
    if fn.cls in WITH_COMM and fn.cls != "free":
        if not comms:
            raise TableError("line %d: %s: class %s needs an MPI_Comm parameter"
                             % (fn.lineno, fn.name, fn.cls))
        first = comms[0]
        pre = pre_call(fn)
        if pre:
            pre = pre.replace("comm,", names[first] + ",", 1)
        else:
            pre = "ftp_pre_%s(&c, %s)" % (fn.cls, names[first])
        lines.append("\tint rc = %s;" % pre)
        args[first] = "c.real"
    elif fn.cls == "free":
        comm = fn.one("comm_freed")
        lines.append("\tint rc = ftp_pre_free(&c, *%s);" % comm)
        args[names.index(comm)] = "&c.real"
    elif fn.cls in OBJ_CLASSES:
        extra = [fn.one(role) for role in OBJ_CLASSES[fn.cls][1]]
        lines.append("\tint rc = ftp_pre_%s(&c, %s);" % (fn.cls, ", ".join([obj_param(fn)] + extra)))
    else:
        lines.append("\tint rc = ftp_pre_%s(&c);" % fn.cls)
    if fn.with_role("ranks", "ranks_out") and fn.cls == "create":
        # A covered communicator's cover decides (a view makes them on
        # its base, whose ranks are the view's).
        lines.append("\tif (rc == MPI_SUCCESS && !ftp_seam_covered(c.comm))\n\t\trc = ftp_ranks_unmapped(c.comm);")
    lines += covered(fn, comms)
    if fn.with_role("ranks", "ranks_out") and fn.cls != "create":
        # After the cover's form, which answers in the program's ranks.
        lines.append("\tif (rc == MPI_SUCCESS)\n\t\trc = ftp_ranks_unmapped(c.comm);")
    if fn.name in SHELLED:
        # Every start runs the nonblocking call (pmpi/persist.h), on any
        # communicator ftshim tracks.
        form_args = [n for i, n in enumerate(names) if i != comms[0]]
        lines.append("\tif (rc == MPI_SUCCESS && c.comm)")
        form = fn.name.replace("MPIX_", "MPI_", 1)
        lines.append("\t\treturn ftp_cover_%s(%s);" % (form, ", ".join(["&c"] + form_args)))
    args = translated_args(fn, args)
    lines.append("\tif (rc == MPI_SUCCESS)")
    call = "%s(%s)" % (entry(fn.name), ", ".join(args))
    if fn.cls == "free":
        call = "ftp_comm_free_real(&c)"
    twin = twin_name(fn.name) if fn.cls in TWINNED else None
    if twin and twin in declared:
        # The blocking call runs as its twin; ftp_block fills the status.
        start, status = twin_call(fn, twin, args, "&c.req")
        lines.append("\t\trc = c.direct ? %s" % call)
        lines.append("\t\t\t      : ftp_block(&c, %s, %s);" % (start, status))
    else:
        if twin:
            lines.append("\t\t/* %s has no %s: it can hang on a death during the call. */"
                         % (fn.name, twin))
        lines.append("\t\trc = %s;" % call)
    lines += translate_out(fn)
    if fn.cls in ("create", "dup"):
        post = "ftp_post_%s(&c, rc, %s)" % (fn.cls, fn.one("comm_out"))
    elif fn.cls == "idup":
        post = "ftp_post_idup(&c, rc, %s, %s)" % (fn.one("comm_out"),
                                                 named(fn, "MPI_Request *", "request"))
    elif fn.cls == "create_group":
        post = "ftp_post_create_group(&c, rc, %s, %s, %s)" % (
            fn.one("group"), named(fn, "int", "tag"), fn.one("comm_out"))
    elif fn.cls == "create_inter":
        post = "ftp_post_create_inter(&c, rc, %s, %s)" % (
            named(fn, "int", "tag"), fn.one("comm_out"))
    elif fn.cls == "free":
        post = "ftp_post_free(&c, rc, %s)" % fn.one("comm_freed")
    elif fn.cls == "file_icoll":
        post = "ftp_post_file_icoll(&c, rc, %s)" % named(fn, "MPI_Request *", "request")
    elif fn.cls in ("ip2p", "icoll") or fn.cls in OBJ_REQUESTS:
        post = "ftp_post_ireq(&c, rc, %s, %s)" % (named(fn, "MPI_Request *", "request"),
                                                 "true" if is_persistent(fn) else "false")
    elif fn.cls == "win_create":
        post = "ftp_post_win_create(&c, rc, %s)" % out_comm_param(fn, "MPI_Win")
    elif fn.cls == "file_open":
        post = "ftp_post_file_open(&c, rc, %s)" % out_comm_param(fn, "MPI_File")
    else:
        post = "ftp_post_%s(&c, rc)" % fn.cls
    lines.append("\treturn %s;" % post)
    lines.append("}")
    lines.append("FTP_ALSO_PMPI(%s);" % fn.name)
    return "\n".join(lines)


def fast_wrapper(fn, declared):
    """A blocking send or receive: the fast path (pmpi/call.h; pmpi/seam.h, ftp_seam_cached)
    in front of the general wrapper, which becomes slow_NAME. None if fn
    has no such path."""
    twin = twin_name(fn.name)
    if fn.cls not in ("send", "recv") or twin not in declared:
        return None
    names = fn.names()
    comm = names[comm_params(fn)[0]]
    rank = fn.one("dest" if fn.cls == "send" else "source")
    start, status = twin_call(fn, twin, ["e->real" if n == comm else n for n in names], "&req")
    if fn.cls == "send":
        finish = "ftp_fast_send(FTP_FN_%s, e, %s, %s, &req)" % (fn.name, rank, start)
    else:
        finish = "ftp_fast_recv(FTP_FN_%s, e, %s, %s, &req, %s)" % (fn.name, rank, start, status)
    slow = wrapper(fn, declared).replace("FT_EXPORT ", "static __attribute__((noinline)) ", 1)
    slow = slow.replace(" %s(" % fn.name, " slow_%s(" % fn.name, 1)
    slow = slow[: slow.rindex("\nFTP_ALSO_PMPI(")]
    return "\n".join([
        slow, "", "FT_EXPORT %s" % fn.proto, "{"] + status_lines(fn) + [
        "\tstruct ftp_comm *e = ftp_seam_cached(%s);" % comm, "",
        "\tif (__builtin_expect(e != NULL, 1)) {",
        "\t\tMPI_Request req;",
        "\t\treturn %s;" % finish,
        "\t}",
        "\treturn slow_%s(%s);" % (fn.name, ", ".join(names)),
        "}",
        "FTP_ALSO_PMPI(%s);" % fn.name])


HEADER = "/* Generated by pmpi/gen-wrappers.py from pmpi/ftshim-api.tsv: do not edit. */\n"


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: gen-wrappers.py TABLE MPI_H_PREPROCESSED OUTDIR\n")
        return 2
    table, decls, outdir = argv[1:]
    try:
        funcs, declared = read_rows(table, decls)
        missing = sorted(declared - set(funcs))
        if missing:
            raise TableError("%s: mpi.h declares %d function(s) that no row classifies: %s"
                             % (table, len(missing), " ".join(missing)))
        present = [f for f in sorted(funcs.values(), key=lambda f: f.name)
                   if f.name in declared or f.cls == "ulfm"]
        wrapped = [f for f in present if f.cls not in UNWRAPPED]
        bodies = [fast_wrapper(f, declared) or wrapper(f, declared)
                  for f in wrapped if f.cls in GENERATED]
    except TableError as e:
        sys.stderr.write("gen-wrappers.py: %s\n" % e)
        return 1

    with open(os.path.join(outdir, "fn_table.h.tmp"), "w") as h:
        h.write(HEADER)
        h.write("#ifndef FTSHIM_PMPI_FN_TABLE_H\n#define FTSHIM_PMPI_FN_TABLE_H\n\n")
        h.write("/* Every function ftshim wraps, by hand or generated. */\nenum ftp_fn {\n")
        for f in wrapped:
            h.write("\tFTP_FN_%s,\n" % f.name)
        h.write("\tFTP_FN_COUNT\n};\n\n")
        h.write("#define FTP_FN_NAMES { \\\n")
        for f in wrapped:
            h.write("\t\"%s\", \\\n" % f.name)
        h.write("}\n\n#endif\n")
    with open(os.path.join(outdir, "wrappers.c.tmp"), "w") as c:
        c.write(HEADER)
        c.write("/* The mechanical wrappers: one per row of a generated class. */\n\n")
        c.write("#include \"ftshim_config.h\"\n#include \"pmpi/mpix_decls.h\"\n#include \"pmpi/call.h\"\n"
                "#include \"pmpi/mode/mode.h\"\n#include \"pmpi/mode_calls.h\"\n"
                "#include \"pmpi/comms.h\"\n#include \"pmpi/create.h\"\n"
                "#include \"pmpi/objects.h\"\n#include \"pmpi/coll_forms.h\"\n"
                "#include \"pmpi/requests.h\"\n\n")
        c.write("\n\n".join(bodies) + "\n")
    with open(os.path.join(outdir, "mode_calls.h.tmp"), "w") as h:
        h.write(HEADER)
        h.write("#ifndef FTSHIM_PMPI_MODE_CALLS_H\n#define FTSHIM_PMPI_MODE_CALLS_H\n\n")
        h.write("#include <mpi.h>\n\nstruct ftp_call;\n\n")
        h.write("/* A recovery mode's own forms of the calls it takes over on a communicator\n"
                " * it covers (pmpi/mode/mode.h): a slot per wrapped call with a\n"
                " * communicator, taking the call's arguments less that communicator\n"
                " * (c's). NULL: the call's role decides. A large-count call NAME_c goes\n"
                " * through NAME's slot. */\n")
        h.write("struct ftp_mode_calls {\n")
        for f in wrapped:
            if has_form(f):
                params = [p for i, p in enumerate(f.params) if i != comm_params(f)[0]]
                h.write("\tint (*%s)(%s);\n" % (f.name, ", ".join(["struct ftp_call *c"] + params)))
        h.write("};\n\n#endif\n")
    with open(os.path.join(outdir, "wrapped.txt.tmp"), "w") as w:
        for f in wrapped:
            w.write(f.name + "\n")
    entries = sorted(declared)
    with open(os.path.join(outdir, "mpi_entry.h.tmp"), "w") as h:
        h.write(HEADER)
        h.write("#ifndef FTSHIM_PMPI_MPI_ENTRY_H\n#define FTSHIM_PMPI_MPI_ENTRY_H\n\n")
        h.write("#include \"pmpi/mpix_decls.h\"\n\n")
        h.write("/* The MPI's deprecated functions (MPI_Attr_get, ...) have entries too. */\n")
        h.write("#pragma GCC diagnostic push\n")
        h.write("#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n")
        h.write("/* The MPI library's own entry point of every function its mpi.h\n"
                " * declares; NULL if the library does not export it. */\n")
        h.write("struct ftp_mpi_entries {\n")
        for n in entries:
            h.write("\t__typeof__(P%s) *P%s;\n" % (n, n))
        h.write("};\n#pragma GCC diagnostic pop\n\nextern struct ftp_mpi_entries ftp_mpi;\n\n")
        h.write("/* Fill ftp_mpi; returns how many entries the library lacks. */\n")
        h.write("int ftp_mpi_resolve(void);\n\n#endif\n")
    with open(os.path.join(outdir, "mpi_entry.c.tmp"), "w") as c:
        c.write(HEADER)
        c.write("/* The MPI's own entry points, found with dlsym(RTLD_NEXT). */\n\n")
        c.write("#include \"ftshim_config.h\"\n#include \"pmpi/mpi_entry.h\"\n\n")
        c.write("#include <dlfcn.h>\n#include <stddef.h>\n\n")
        c.write("struct ftp_mpi_entries ftp_mpi;\n\n")
        c.write("#define FTP_ENTRY(name) \\\n"
                "\t(missing += (ftp_mpi.name = (__typeof__(ftp_mpi.name))dlsym(RTLD_NEXT, #name)) == NULL)\n\n")
        c.write("int ftp_mpi_resolve(void)\n{\n\tint missing = 0;\n\n")
        for n in entries:
            c.write("\tFTP_ENTRY(P%s);\n" % n)
        c.write("\treturn missing;\n}\n")
    for name in ("fn_table.h", "mode_calls.h", "wrappers.c", "wrapped.txt", "mpi_entry.h", "mpi_entry.c"):
        os.replace(os.path.join(outdir, name + ".tmp"), os.path.join(outdir, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
