/* config_vars.h: THE table of ftshim's environment variables. Everything
 * about a variable is said once, here: its name, its type, its default,
 * its range, and what it does. The parser (config.c), the README's table
 * and man 7 ftshim are all made from it (tools/config-doc prints the
 * tables; a test checks that the README matches).
 *
 * X(NAME, field, TYPE, default, min, max, keywords, help)
 *   NAME     the variable without its FTSHIM_ prefix
 *   field    the member of struct ft_config that holds the parsed value
 *   TYPE     BOOL, UINT, DURATION (stored in ns), ENUM (index of the
 *            keyword), STRING
 *   min,max  range for UINT and DURATION (DURATION in ns)
 *   keywords "a|b|c" for ENUM, else NULL
 */
#ifndef FTSHIM_CONFIG_VARS_H
#define FTSHIM_CONFIG_VARS_H

#include "src/common.h"

#define FT_CONFIG_VARS(X) \
	X(DISABLE, disable, BOOL, "0", 0, 1, NULL, \
	  "1 makes ftshim a pure pass-through: no other variable is read, nothing is " \
	  "detected, checked or logged") \
	X(LOG, log_level, ENUM, "info", 0, 0, "error|warn|info|debug|trace", \
	  "How much ftshim logs; each line starts with ftshim[RANK] and the seconds since MPI_Init") \
	X(LOG_FILE, log_file, STRING, "", 0, 0, NULL, \
	  "Log to this file (appending) instead of stderr; %r becomes the world rank, %h the " \
	  "host name, %p the pid, %% a percent sign")

#endif
