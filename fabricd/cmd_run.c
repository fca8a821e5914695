// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_run.c - placeholder until implemented. */
#include "commands.h"
#include "log.h"

int cmd_run(const struct options *o)
{
	(void)o;
	log_error("run: not implemented yet");
	return 1;
}
