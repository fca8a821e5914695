// SPDX-License-Identifier: GPL-2.0-or-later
/* run.c - `fabricd run`: the daemon (daemon/daemon.c). */
#include "cli/commands.h"
#include "daemon/daemon.h"
#include "base/log.h"

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
