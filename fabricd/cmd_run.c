// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_run.c - `fabricd run`: the daemon (daemon.c). */
#include "commands.h"
#include "daemon.h"
#include "log.h"

int cmd_run(const struct options *o)
{
	if (o->argc > 0) {
		log_error("run: unexpected argument \"%s\"; usage: fabricd run -c FILE [-n NODE] "
			  "[--grace SECONDS] [--verbose]",
			  o->argv[0]);
		return 1;
	}
	return daemon_run(o);
}
