// SPDX-License-Identifier: GPL-2.0-or-later
/* run.c - `fabricd run`: the daemon (daemon/daemon.c). */
#include "cli/commands.h"
#include "daemon/daemon.h"
#include "base/log.h"

int cmd_run(const struct options *o)
{
	return daemon_run(o);
}
