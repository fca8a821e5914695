// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_status.c - placeholder until implemented. */
#include "commands.h"
#include "log.h"

int cmd_status(const struct options *o)
{
	(void)o;
	log_error("status: not implemented yet");
	return 1;
}
