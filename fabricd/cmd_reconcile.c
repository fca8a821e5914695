// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_reconcile.c - placeholder until implemented. */
#include "commands.h"
#include "log.h"

int cmd_plan(const struct options *o)
{
	(void)o;
	log_error("plan: not implemented yet");
	return 1;
}

int cmd_apply(const struct options *o)
{
	(void)o;
	log_error("apply: not implemented yet");
	return 1;
}

int cmd_down(const struct options *o)
{
	(void)o;
	log_error("down: not implemented yet");
	return 1;
}
