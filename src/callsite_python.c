/* callsite_python.c: the Python line that made an MPI call, when the
 * calling thread runs a Python interpreter (mpi4py), for the call-site
 * descriptions of callsite.h. The interpreter is found in the process,
 * never loaded: its C API is looked up with dlsym (python3 exports it to
 * its extension modules); a program without one gets -1 at the cost of
 * those lookups, once.
 *
 * Reading a thread's frames takes the interpreter's lock (the GIL). It is
 * taken only in a thread that Python already knows (never one it would
 * have to adopt, such as ftshim's own), and only where ftshim holds none
 * of its own locks: the one caller is the error path of a wrapped call,
 * just before the error goes back to the caller. mpi4py releases the GIL
 * around a blocking MPI call and takes it back as soon as the call
 * returns, to raise the exception; taking it a moment earlier adds no
 * wait the program would not have had. A thread that already holds it
 * (mpi4py keeps it over cheap calls) takes it again recursively. Not while
 * the interpreter is finalizing, when taking the GIL ends the thread. */
#include "ftshim_config.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "src/callsite.h"

/* The C API functions used; all from the stable ABI of CPython 3.x
 * except the finalizing test, which 3.13 renamed. */
struct python_api {
	int (*is_initialized)(void);
	int (*is_finalizing)(void);
	void *(*this_thread_state)(void);
	int (*gil_ensure)(void);
	void (*gil_release)(int);
	void *(*current_frame)(void);
	int (*frame_line)(void *);
	void *(*frame_code)(void *);
	void *(*get_attr)(void *, const char *);
	const char *(*as_utf8)(void *);
	void (*dec_ref)(void *);
	void (*err_fetch)(void **, void **, void **);
	void (*err_restore)(void *, void *, void *);
};

static void *sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

/* Looked up once: 1 found, -1 not (no interpreter in this process). Any
 * thread; the lookups are idempotent, so a race only repeats them. */
static struct python_api api;
static _Atomic int api_state;

static bool python_api_found(void)
{
	int state = atomic_load_explicit(&api_state, memory_order_acquire);

	if (state != 0)
		return state > 0;
	struct python_api a;
	*(void **)&a.is_initialized = sym("Py_IsInitialized");
	*(void **)&a.is_finalizing = sym("Py_IsFinalizing");
	if (!a.is_finalizing)
		*(void **)&a.is_finalizing = sym("_Py_IsFinalizing");
	*(void **)&a.this_thread_state = sym("PyGILState_GetThisThreadState");
	*(void **)&a.gil_ensure = sym("PyGILState_Ensure");
	*(void **)&a.gil_release = sym("PyGILState_Release");
	*(void **)&a.current_frame = sym("PyEval_GetFrame");
	*(void **)&a.frame_line = sym("PyFrame_GetLineNumber");
	*(void **)&a.frame_code = sym("PyFrame_GetCode");
	*(void **)&a.get_attr = sym("PyObject_GetAttrString");
	*(void **)&a.as_utf8 = sym("PyUnicode_AsUTF8");
	*(void **)&a.dec_ref = sym("Py_DecRef");
	*(void **)&a.err_fetch = sym("PyErr_Fetch");
	*(void **)&a.err_restore = sym("PyErr_Restore");
	bool all = a.is_initialized && a.is_finalizing && a.this_thread_state && a.gil_ensure &&
		   a.gil_release && a.current_frame && a.frame_line && a.frame_code && a.get_attr &&
		   a.as_utf8 && a.dec_ref && a.err_fetch && a.err_restore;
	if (all)
		api = a;
	atomic_store_explicit(&api_state, all ? 1 : -1, memory_order_release);
	return all;
}

/* A string attribute of obj, copied into out ("?" if it has none). With
 * the GIL. */
static void string_attr(void *obj, const char *name, char *out, size_t outlen)
{
	void *value = api.get_attr(obj, name);
	const char *s = value ? api.as_utf8(value) : NULL;

	snprintf(out, outlen, "%s", s ? s : "?");
	if (value)
		api.dec_ref(value);
}

int ft_callsite_python(char *out, size_t outlen)
{
	if (outlen == 0 || !python_api_found() || !api.is_initialized() || api.is_finalizing() ||
	    !api.this_thread_state())
		return -1;
	int gil = api.gil_ensure();
	void *type, *value, *traceback;
	/* An exception may be pending (the program's, or one of ours
	 * below): it is left as it was. */
	api.err_fetch(&type, &value, &traceback);
	void *frame = api.current_frame();
	int rc = -1;
	if (frame) {
		char file[512], function[128];
		void *code = api.frame_code(frame);
		int line = api.frame_line(frame);
		if (code) {
			string_attr(code, "co_filename", file, sizeof file);
			string_attr(code, "co_name", function, sizeof function);
			api.dec_ref(code);
			snprintf(out, outlen, "%s (%s:%d)", function, file, line);
			rc = 0;
		}
	}
	api.err_restore(type, value, traceback);
	api.gil_release(gil);
	return rc;
}
