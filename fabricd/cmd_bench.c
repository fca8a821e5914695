// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_bench.c - placeholder until implemented. */
#include "commands.h"
#include "log.h"

int cmd_bench(const struct options *o)
{
	(void)o;
	log_error("bench: not implemented yet");
	return 1;
}
