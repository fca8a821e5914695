/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * commands.h - one function per subcommand (main.c holds only the table and
 * the option parsing). Each returns the process exit status: 0 success,
 * 1 invalid input or failure, 2 (plan) changes found.
 */
#ifndef FABRICD_COMMANDS_H
#define FABRICD_COMMANDS_H

#include <stdbool.h>

#include "wg.h"

#define FABRICD_DEFAULT_CONFIG	 "/etc/fabricd/cluster.json"
#define FABRICD_DEFAULT_KEY_FILE "/etc/fabricd/private.key"

enum wg_backend_choice {
	WG_CHOICE_AUTO,
	WG_CHOICE_KERNEL,
	WG_CHOICE_USERSPACE,
};

struct options {
	const char *config;   /* -c FILE */
	const char *node;     /* -n NODE, default: hostname */
	const char *key_file; /* --key-file */
	const char *psk_dir;  /* --psk-dir */
	enum wg_backend_choice wg_backend;
	bool json;
	bool verbose;
	unsigned int grace; /* seconds an old VXLAN device keeps receiving after a switch */
	int argc;	    /* positional arguments after the subcommand */
	char **argv;
};

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

#endif
