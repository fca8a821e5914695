// SPDX-License-Identifier: GPL-2.0-or-later
/* firewall.c - the nftables guard (placeholder: no guard yet). */
#include <stddef.h>

#include "firewall.h"

int firewall_observe(struct firewall_obs **out)
{
	*out = NULL;
	return 0;
}

void firewall_obs_free(struct firewall_obs *fw)
{
	(void)fw;
}

int firewall_plan(const struct node_state *want, const struct firewall_obs *have,
		  struct plan *p)
{
	(void)want;
	(void)have;
	(void)p;
	return 0;
}

int firewall_plan_down(const struct firewall_obs *have, struct plan *p)
{
	(void)have;
	(void)p;
	return 0;
}

int firewall_apply(struct op *op)
{
	(void)op;
	return 0;
}
