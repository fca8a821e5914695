// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/getopt_say.c - a refused option in one line (not the whole usage text,
 * where the culprit was lost), and single-valued options given twice.
 */
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/getopt_say.h"
#include "base/log.h"

/* The long options whose names begin with the len bytes of word, into list; their count. */
static int prefix_matches(const struct option *longopts, const char *word, size_t len, char *list,
			  size_t size)
{
	size_t used = 0;
	int n = 0;

	list[0] = '\0';
	for (const struct option *l = longopts; l->name; l++) {
		if (strncmp(l->name, word, len))
			continue;
		n++;
		if (used < size)
			used += (size_t)snprintf(list + used, size - used, "%s--%s",
						 n > 1 ? ", " : "", l->name);
	}
	return n;
}

/* One of the node commands' options given to a command of its own parser (zone, bench). */
static void say_not_here(const char *command, const char *word, size_t len, const char *help)
{
	log_error("fabricd %s: %.*s is an option of the commands that work on a node (run, apply, "
		  "plan, status, ...: see fabricd --help), not of %s; leave it out (see %s --help)",
		  command, (int)len, word, command, help);
}

/* A long option getopt refused: word is "--name" or "--name=value". */
static void bad_long(const char *command, int c, const char *word, const struct option *longopts,
		     const char *help)
{
	size_t len = strcspn(word + 2, "=");
	char list[256];

	if (c == ':')
		log_error("fabricd %s: option --%.*s needs a value (see %s --help)", command,
			  (int)len, word + 2, help);
	else if (optopt)
		log_error("fabricd %s: option --%.*s takes no value (see %s --help)", command,
			  (int)len, word + 2, help);
	else if (prefix_matches(longopts, word + 2, len, list, sizeof(list)) > 1)
		log_error("fabricd %s: option --%.*s is ambiguous (%s): give it whole", command,
			  (int)len, word + 2, list);
	else if (cli_shared_option(word))
		say_not_here(command, word, len + 2, help);
	else
		log_error("fabricd %s: unknown option --%.*s (see %s --help)", command, (int)len,
			  word + 2, help);
}

void cli_bad_option(const char *command, int c, char *const argv[], const struct option *longopts,
		    const char *help)
{
	const char *word = optind > 0 ? argv[optind - 1] : "";
	bool short_known = false;

	for (const struct option *l = longopts; l->name; l++)
		short_known |= optopt > 0 && optopt < 256 && l->val == optopt;
	/*
	 * An unknown letter ("-x", or "-vx" where getopt is still inside the
	 * word and argv[optind - 1] is the one before).
	 */
	if (c == '?' && optopt > 0 && optopt < 256 && !short_known) {
		char letter[3] = {'-', (char)optopt, '\0'};

		if (cli_shared_option(letter))
			say_not_here(command, letter, 2, help);
		else
			log_error("fabricd %s: unknown option -%c (see %s --help)", command, optopt,
				  help);
	} else if (!strncmp(word, "--", 2) && word[2])
		bad_long(command, c, word, longopts, help);
	else if (c == ':' && optopt > 0 && optopt < 256)
		log_error("fabricd %s: option -%c needs a value (see %s --help)", command, optopt,
			  help);
	else
		log_error("fabricd %s: unknown option \"%s\" (see %s --help)", command, word, help);
}

/* How an option is named for people: "-c" where it has a letter, else "--name". */
static void option_name(const struct option *l, char *out, size_t len)
{
	if (l->val > 0 && l->val < 256)
		snprintf(out, len, "-%c", l->val);
	else
		snprintf(out, len, "--%s", l->name);
}

/* A file's place: its directory resolved, and its own name; false when the directory is not there.
 */
static bool file_place(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], base[PATH_MAX], resolved[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	if (!realpath(dirname(dir), resolved))
		return false;
	return (size_t)snprintf(out, len, "%s/%s", resolved, basename(base)) < len;
}

/*
 * The same value written two ways: "a.json" and "./a.json" name one file (an
 * existing one by its inode, one still to be made by its resolved directory).
 */
static bool same_value(const char *a, const char *b)
{
	char place_a[PATH_MAX], place_b[PATH_MAX];
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	if (!strchr(a, '/') && !strchr(b, '/'))
		return false; /* two names, not two ways to one file */
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return file_place(a, place_a, sizeof(place_a)) && file_place(b, place_b, sizeof(place_b)) &&
	       !strcmp(place_a, place_b);
}

int cli_once(struct cli_seen *seen, const struct option *longopts, int c, const char *arg)
{
	char name[64];
	int i = 0;

	while (longopts[i].name && longopts[i].val != c)
		i++;
	if (!longopts[i].name || longopts[i].has_arg == no_argument || !arg || i >= CLI_SEEN_MAX)
		return 0;
	if (seen->value[i] && !same_value(seen->value[i], arg)) {
		option_name(&longopts[i], name, sizeof(name));
		log_error("%s given twice (\"%s\", then \"%s\"): give it once", name,
			  seen->value[i], arg);
		return -1;
	}
	seen->value[i] = arg;
	return 0;
}
