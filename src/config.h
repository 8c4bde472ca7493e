/* config.h: ftshim's configuration, parsed in one place from the FTSHIM_*
 * environment variables described in config_vars.h. An invalid value is
 * never replaced by a default: ft_config_load fails with one line naming
 * the variable, the value and what is accepted, and the caller stops the
 * rank. Thread rule: load once at MPI_Init; the result is read-only after. */
#ifndef FTSHIM_CONFIG_H
#define FTSHIM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/config_vars.h"

#define FT_CONFIG_PREFIX "FTSHIM_"
/* Room for one error line. */
#define FT_CONFIG_ERR_MAX 512

enum ft_config_type { FT_CV_BOOL, FT_CV_UINT, FT_CV_DURATION, FT_CV_ENUM, FT_CV_STRING };

#define FT_CTYPE_BOOL bool
#define FT_CTYPE_UINT uint64_t
#define FT_CTYPE_DURATION uint64_t
#define FT_CTYPE_ENUM int
#define FT_CTYPE_STRING const char *

/* FTSHIM_PARTITION's keywords, in the table's order. */
enum ft_partition_mode { FT_PARTITION_MAJORITY = 0, FT_PARTITION_OFF = 1 };

#define FT_CONFIG_FIELD(group, name, field, type, def, min, max, kw, help) FT_CTYPE_##type field;
struct ft_config {
	FT_CONFIG_VARS(FT_CONFIG_FIELD)
};
#undef FT_CONFIG_FIELD

/* The description of one variable, from the table. */
struct ft_config_var {
	const char *name;  /* full name, with the FTSHIM_ prefix; first, for ft_closest_word */
	const char *group; /* what it is for: the heading it is listed under */
	enum ft_config_type type;
	const char *def;
	uint64_t min, max;
	const char *keywords;
	const char *help;
	size_t offset; /* of the value in struct ft_config */
};

extern const struct ft_config_var ft_config_vars[];
extern const size_t ft_config_var_count;

/* The table entry of a variable (full name, with the prefix), or NULL. */
const struct ft_config_var *ft_config_find(const char *name);

/* Fill cfg with every default. */
void ft_config_defaults(struct ft_config *cfg);

/* Parse every FTSHIM_* variable of envp (NULL-terminated, as environ) into
 * cfg. Returns 0, or -EINVAL with one line (no newline, no "ftshim:"
 * prefix) in err. An unknown FTSHIM_ name close to a known one (a typo:
 * FTSHIM_REPLCAS) is an error that names the known one; one far from any
 * is not (ft_config_unknown lists those). If FTSHIM_DISABLE is true,
 * nothing else is parsed. Strings in cfg point into envp. */
int ft_config_load(struct ft_config *cfg, char *const *envp, char *err, size_t errlen);

/* The FTSHIM_ names of envp that are no variable and near no variable's
 * name, comma-separated in out (truncated to outlen); how many. */
int ft_config_unknown(char *const *envp, char *out, size_t outlen);

/* What a variable accepts, as used in error messages and the docs. */
void ft_config_describe_accepted(const struct ft_config_var *var, char *out, size_t outlen);

/* Format a duration in ns the way the table writes them (100ms, 2s, 1.5s). */
void ft_config_format_duration(uint64_t ns, char *out, size_t outlen);

/* A duration: "250ms", "1.5s", "500us", "100" (ms). 0, or -EINVAL /
 * -ERANGE with the reason in why. */
int ft_parse_duration(const char *text, uint64_t *ns, char *why, size_t whylen);

/* The word closest to name[0..len) (case-insensitive, at most 3 edits
 * away), or NULL. words holds n items of stride bytes, each starting with
 * a const char * (an array of strings, or of structs whose first member
 * is the name). */
const char *ft_closest_word(const char *name, size_t len, const void *words, size_t n,
			    size_t stride);

/* Parse one value of the given variable; for tests and for the parser.
 * Returns 0 or -EINVAL with the reason (without name or accepted list). */
int ft_config_parse_value(const struct ft_config_var *var, const char *value, void *dst,
			  char *why, size_t whylen);

#endif
