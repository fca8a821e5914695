// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/mtu.c - the MTU rules of DESIGN.md. */
#include <errno.h>
#include <sys/socket.h>

#include "definition/mtu.h"

unsigned int mtu_wg_overhead(int family)
{
	return family == AF_INET6 ? 80 : 60;
}

unsigned int mtu_vxlan_overhead(int family)
{
	return family == AF_INET6 ? 70 : 50;
}

int mtu_plan_compute(unsigned int underlay_mtu, int underlay_family, int wg_family,
		     int fabric_family, struct mtu_plan *out)
{
	unsigned int wg = mtu_wg_overhead(wg_family);
	unsigned int vx_under = mtu_vxlan_overhead(underlay_family);
	unsigned int vx_fabric = mtu_vxlan_overhead(fabric_family);

	if (underlay_mtu < MTU_MIN || underlay_mtu > MTU_MAX)
		return -EINVAL;
	out->underlay = underlay_mtu;
	out->fabric = underlay_mtu - wg;
	out->plain_max = underlay_mtu - vx_under;
	out->secure_max = out->fabric - vx_fabric;
	return 0;
}

unsigned int mtu_zone(const struct mtu_plan *p, const struct zone *z, unsigned int *computed)
{
	return mtu_zone_as(p, z, z->transport, computed);
}

unsigned int mtu_zone_as(const struct mtu_plan *p, const struct zone *z, enum transport transport,
			 unsigned int *computed)
{
	unsigned int mtu;

	if (z->mtu_policy == MTU_POLICY_MAX)
		mtu = transport == TRANSPORT_SECURE ? p->secure_max : p->plain_max;
	else
		mtu = p->plain_max < p->secure_max ? p->plain_max : p->secure_max;
	if (computed)
		*computed = mtu;
	if ((z->flags & ZONE_HAS_MTU) && z->mtu < mtu)
		mtu = z->mtu;
	return mtu;
}
