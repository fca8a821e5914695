/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli/getopt_say.h - what every option parser of the command line shares:
 * a refused option said in one line.
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

#endif
