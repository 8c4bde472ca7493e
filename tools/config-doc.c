/* config-doc: print the table of FTSHIM_* variables (src/config_vars.h) as
 * Markdown (for the README) or as man(7) paragraphs (for ftshim.7), so
 * that the docs and the parser cannot drift apart. */
#include "ftshim_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "src/config.h"

/* Whether variable i is the first of its group (the table keeps a
 * group's variables together). */
static bool starts_group(size_t i)
{
	return i == 0 || strcmp(ft_config_vars[i].group, ft_config_vars[i - 1].group) != 0;
}

static void print_markdown(void)
{
	char accepted[256];

	printf("| Variable | Default | Accepted | Meaning |\n|---|---|---|---|\n");
	for (size_t i = 0; i < ft_config_var_count; i++) {
		const struct ft_config_var *v = &ft_config_vars[i];
		if (starts_group(i))
			printf("| **%s** | | | |\n", v->group);
		ft_config_describe_accepted(v, accepted, sizeof accepted);
		printf("| `%s` | %s%s%s | %s | %s |\n", v->name, v->def[0] ? "`" : "",
		       v->def[0] ? v->def : "unset", v->def[0] ? "`" : "", accepted, v->help);
	}
}

/* man(7) needs backslashes doubled and a leading dot or quote escaped. */
static void man_text(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else
			putchar(*s);
	}
}

static void print_man(void)
{
	char accepted[256];

	for (size_t i = 0; i < ft_config_var_count; i++) {
		const struct ft_config_var *v = &ft_config_vars[i];
		if (starts_group(i)) {
			printf(".SS ");
			man_text(v->group);
			printf("\n");
		}
		ft_config_describe_accepted(v, accepted, sizeof accepted);
		printf(".TP\n.B ");
		man_text(v->name);
		printf("\n");
		man_text(v->help);
		printf(".\n.br\nDefault: ");
		man_text(v->def[0] ? v->def : "unset");
		printf(". Accepted: ");
		man_text(accepted);
		printf(".\n");
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--markdown") == 0) {
		print_markdown();
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--man") == 0) {
		print_man();
		return 0;
	}
	fprintf(stderr, "usage: config-doc --markdown | --man\n");
	return 2;
}
