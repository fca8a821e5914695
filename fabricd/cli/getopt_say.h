/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli/getopt_say.h - what every option parser of the command line shares:
 * a refused option said in one line, and a single-valued option given twice.
 */
#ifndef FABRICD_GETOPT_SAY_H
#define FABRICD_GETOPT_SAY_H

#include <getopt.h>

/*
 * getopt_long() (with opterr 0 and ':' leading shortopts) returned c, '?' or
 * ':', for argv: said in one line, naming the option and the command, e.g.
 * "fabricd apply: unknown option --foo (see fabricd --help)"; help is the
 * command whose --help shows the usage ("fabricd" or "fabricd bench").
 */
void cli_bad_option(const char *command, int c, char *const argv[], const struct option *longopts,
		    const char *help);

/* The values given so far, one per entry of a longopts table (at most CLI_SEEN_MAX). */
#define CLI_SEEN_MAX 64
struct cli_seen {
	const char *value[CLI_SEEN_MAX];
};

/*
 * Option c (a longopts val) with its value arg: given before with another
 * value, refused (the last one won unseen: `-n pve1 -n pve2` was pve2).
 * The same value again is harmless. 0, or -1 (said).
 */
int cli_once(struct cli_seen *seen, const struct option *longopts, int c, const char *arg);

#endif
