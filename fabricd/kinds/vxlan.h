/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/vxlan.h - a VXLAN device of a vnet: vx<VNI> (plain, port 4789, from the
 * underlay address) or vs<VNI> (secure, fabric.secure_port, from the fabric
 * address), an isolated port of the vnet's bridge. A vnet may have both at
 * once, each in its own role (engine/switch.c decides which).
 */
#ifndef FABRICD_VXLAN_H
#define FABRICD_VXLAN_H

#include "definition/desired.h"
#include "kinds/link.h"
#include "engine/plan.h"

/* What the bridge does with the port; what the device sends follows from it. */
enum vxlan_role {
	/* sends: flood remotes, the bridge floods to it and learns behind it */
	VXLAN_SENDS,
	/* receives, and answers what it received: learns, no flooding, no remotes */
	VXLAN_LISTENS,
	/* only receives: no learning, no flooding, its learned entries flushed */
	VXLAN_MUTE,
};

/* One wanted VXLAN device: the kind's desired state. */
struct vxlan_port {
	char name[FABRICD_IFNAME_MAX + 1];
	const char *bridge; /* borrowed */
	uint32_t vni;
	uint16_t port;
	struct ip_addr local;
	unsigned int mtu;
	bool evpn; /* zebra installs remotes and MACs: the device and port do not learn */
	enum vxlan_role role;
	size_t n_remotes; /* the all-zeros entries it should have */
	const struct ip_addr *remotes;
	/*
	 * EVPN: the members' addresses in the other transport (a VTEP zebra
	 * installs while a switch is under way), and the remote VTEPs zebra
	 * holds for the VNI, read only when the device has an entry to neither
	 * list (zebra_unknown: FRR runs but did not say). A flood entry to none
	 * of them is stale (zebra died and missed the withdrawal): removed.
	 */
	size_t n_also;
	const struct ip_addr *also;
	size_t n_zebra;
	const struct ip_addr *zebra;
	bool zebra_unknown;
	/*
	 * The MACs zebra holds for the VNI, read only when the device has a MAC
	 * entry of zebra's to neither list (zebra_macs_unknown: not said). One
	 * that zebra does not hold is stale: removed.
	 */
	size_t n_zebra_macs;
	const uint8_t (*zebra_macs)[6];
	bool zebra_macs_unknown;
	char alias[LINK_ALIAS_MAX]; /* the owner mark and the stage note, if any */
	bool late; /* if it is created: in PHASE_STANDBY, after the flood entries */
};

const char *vxlan_role_name(enum vxlan_role role);

/* RTM_NEWLINK body creating the device of op (OP_VXLAN_CREATE), down, in bridge master. */
void vxlan_put_create(struct nlmsghdr *nlh, const struct op *op, int master);

/*
 * vxlan_kind (kinds/kind.h) plans device in->port. in->link: the owned link
 * of that name or NULL; in->bridge: the vnet's bridge link if it exists and
 * is kept (NULL otherwise). A port that takes a smaller role (stops flooding
 * or learning) changes in PHASE_RETIRE, after the other device of its vnet
 * has taken over. *in->made is set when the device is (re)created, so its
 * FDB starts empty.
 */

/* True when l's bridge port could still send: learning or flooding on. */
bool vxlan_port_may_send(const struct link_obs *l);

#endif
