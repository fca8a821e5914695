/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli/commands.h - one function per subcommand (cli/main.c holds only the table and
 * the option parsing). Each returns the process exit status: 0 success,
 * 1 invalid input or failure, 2 (plan) changes found.
 */
#ifndef FABRICD_COMMANDS_H
#define FABRICD_COMMANDS_H

#include <stdbool.h>

#include "engine/options.h"

/* Whole seconds 0..max for option --name; -1 (logged) otherwise. */
int cli_parse_seconds(const char *name, const char *text, unsigned int max, unsigned int *out);

/*
 * status, or 1 (logged) when what was printed could not reach stdout (full disk,
 * closed pipe): every exit after printing goes through it, --help's too.
 */
int cli_exit_status(int status);

/*
 * Whether word ("-n", "--key-file", "--key-file=F") is one of the options the
 * node commands share (fabricd --help): zone, vnet, import-pve and bench
 * name it as such when they refuse it.
 */
bool cli_shared_option(const char *word);

int cmd_check(const struct options *o);
int cmd_render(const struct options *o);
int cmd_plan(const struct options *o);
int cmd_apply(const struct options *o);
int cmd_run(const struct options *o);
int cmd_set_transport(const struct options *o);
int cmd_status(const struct options *o);
int cmd_down(const struct options *o);
int cmd_genkey(const struct options *o);
int cmd_pubkey(const struct options *o);
int cmd_bench(const struct options *o);
int cmd_init(const struct options *o);
int cmd_join(const struct options *o);
int cmd_leave(const struct options *o);
int cmd_import_pve(const struct options *o);
int cmd_zone(const struct options *o);
int cmd_vnet(const struct options *o);

#endif
