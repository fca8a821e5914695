// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_render.c - placeholder until implemented. */
#include "commands.h"
#include "log.h"

int cmd_render(const struct options *o)
{
	(void)o;
	log_error("render: not implemented yet");
	return 1;
}
