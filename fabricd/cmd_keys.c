// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_keys.c - placeholder until implemented. */
#include "commands.h"
#include "log.h"

int cmd_genkey(const struct options *o)
{
	(void)o;
	log_error("genkey: not implemented yet");
	return 1;
}

int cmd_pubkey(const struct options *o)
{
	(void)o;
	log_error("pubkey: not implemented yet");
	return 1;
}
