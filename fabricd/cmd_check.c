// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_check.c - placeholder until implemented. */
#include "commands.h"
#include "log.h"

int cmd_check(const struct options *o)
{
	(void)o;
	log_error("check: not implemented yet");
	return 1;
}
