// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/conflicts.c - what stops a node's plan before any change: wanted
 * names held by links fabricd does not own, VNIs and UDP ports held by
 * foreign VXLAN devices or sockets, bridges renamed by hand onto wanted
 * names, and a foreign guard table.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/conflicts.h"
#include "engine/guard_io.h"
#include "engine/takeover.h"
#include "kinds/fabric.h"
#include "kinds/link.h"

/* A wanted name held by a link fabricd does not own (a bridge of "bridges": "existing" may be). */
static void check_names(const struct desired_vnet *v, const struct observed *have,
			const char *owner, struct diag *diag)
{
	const char *names[3] = {v->name, v->vxlan, v->standby ? v->other_vxlan : NULL};
	char path[64];

	for (size_t k = 0; k < 3; k++) {
		const struct link_obs *l = names[k] ? link_find(&have->links, names[k]) : NULL;

		if (!l || link_is_owned(l, owner) || (k == 0 && v->existing_bridge))
			continue;
		snprintf(path, sizeof(path), "%s %s", k ? "vxlan" : "bridge", names[k]);
		/* a VXLAN device is named after the VNI, a bridge after the vnet */
		diag_add(diag, path,
			 "a link named %s exists that fabricd does not own (kind %s, alias "
			 "\"%s\"); delete or rename it, or %s",
			 names[k], l->kind[0] ? l->kind : "unknown", link_alias(l),
			 k ? "give the vnet another VNI" : "rename the vnet");
	}
}

/*
 * Whether VXLAN device l receives on the kernel socket a device on port with
 * a local address of family would: the same port and family (an external
 * device opens both).
 */
static bool same_socket(const struct link_obs *l, uint16_t port, int family)
{
	return l->port == port && (l->vxlan_external || l->vxlan_ipv6 == (family == AF_INET6));
}

/* A VXLAN device fabricd does not own that holds v's VNI on one of its ports. */
static void check_vni(const struct desired_vnet *v, const struct link_obs *l,
		      const struct observed *have, struct diag *diag)
{
	bool standby_port = v->standby && l->port == v->other_port;
	char path[64];

	/* the kernel refuses a second device of a VNI only on the same socket, same options */
	if (l->vni != v->vni || (l->port != v->port && !standby_port) || l->vxlan_other_rx ||
	    !same_socket(l, l->port, standby_port ? v->other_local.family : v->local.family) ||
	    !strcmp(l->name, standby_port ? v->other_vxlan : v->vxlan) ||
	    takeover_applies(v, l, have))
		return;
	snprintf(path, sizeof(path), "vxlan %s", standby_port ? v->other_vxlan : v->vxlan);
	diag_add(diag, path,
		 "VNI %u on UDP port %u is already used by %s, which fabricd does not own; "
		 "delete that device",
		 v->vni, l->port, l->name);
}

/*
 * A foreign VXLAN device that is up holds its UDP socket; with receive
 * options other than fabricd's its socket cannot be shared, so a device of
 * fabricd's on that port and family would fail to come up (EADDRINUSE).
 * Named once, at the first vnet device that would.
 */
static void check_port(const struct node_state *want, const struct link_obs *l, struct diag *diag)
{
	char path[64];

	if (!(l->flags & IFF_UP) || !l->vxlan_other_rx)
		return;
	for (size_t i = 0; i < want->n_vnets; i++) {
		const struct desired_vnet *v = &want->vnets[i];
		const char *name =
		    same_socket(l, v->port, v->local.family) ? v->vxlan
		    : v->standby && same_socket(l, v->other_port, v->other_local.family)
			? v->other_vxlan
			: NULL;

		if (!name)
			continue;
		snprintf(path, sizeof(path), "vxlan %s", name);
		diag_add(diag, path,
			 "UDP port %u is held by %s, a VXLAN device with other receive options "
			 "(external, vnifilter, gbp, gpe, remote checksum or zero IPv6 checksums), "
			 "and the kernel cannot share that port with fabricd's devices: delete %s, "
			 "give it another dstport, or take it down",
			 l->port, l->name, l->name);
		return;
	}
}

/*
 * Whether a socket of this network namespace holds UDP port in a family not
 * skipped: a bind of our own fails then. Only EADDRINUSE says so; a family
 * the namespace lacks says nothing.
 */
static bool udp_port_held(uint16_t port, bool skip_ipv4, bool skip_ipv6)
{
	struct sockaddr_in in4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	const struct {
		int family;
		bool skip;
		const struct sockaddr *sa;
		socklen_t len;
	} tries[] = {{AF_INET, skip_ipv4, (const struct sockaddr *)&in4, sizeof(in4)},
		     {AF_INET6, skip_ipv6, (const struct sockaddr *)&in6, sizeof(in6)}};
	bool held = false;

	for (size_t i = 0; i < 2 && !held; i++) {
		int one = 1, fd;

		if (tries[i].skip ||
		    (fd = socket(tries[i].family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
			continue;
		/* as WireGuard binds: one socket per family */
		if (tries[i].family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		held = bind(fd, tries[i].sa, tries[i].len) < 0 && errno == EADDRINUSE;
		close(fd);
	}
	return held;
}

/*
 * An owned WireGuard device under another name than wgfab0: the fabric renamed
 * by hand where no daemon saw it (fabric_renamed), holding the port. Said so.
 */
static bool own_fabric_renamed(const struct node_state *want, const struct observed *have,
			       uint16_t port, struct diag *diag)
{
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];

		if (strcmp(l->name, FABRIC_IFNAME) && link_is_owned(l, want->owner) &&
		    fabric_link_is_wireguard(l)) {
			diag_add(diag, "fabric " FABRIC_IFNAME,
				 "listen port %u is taken by %s, fabricd's own WireGuard device "
				 "under another name (%s renamed by hand?): give it its name back "
				 "(ip link set %s down name %s; up again by the next pass), or "
				 "delete it",
				 port, l->name, FABRIC_IFNAME, l->name, FABRIC_IFNAME);
			return true;
		}
	}
	return false;
}

/*
 * The fabric's listen port held by another socket: apply would build the
 * guard and the vnets, then fail at the device (the kernel takes none of its
 * settings, leaving it without a key). Not checked while the fabric has it.
 * A VXLAN device of another manager is named (kernel sockets have no process
 * for ss to name); fabricd's own, on a port the definition no longer gives
 * VXLAN (it cannot want a VXLAN port for WireGuard), goes first in this plan,
 * so only the family it does not hold is tried.
 */
static void check_listen_port(const struct node_state *want, const struct observed *have,
			      struct diag *diag)
{
	const struct link_obs *wg = link_find(&have->links, FABRIC_IFNAME);
	uint16_t port = want->fabric.listen_port;
	bool own_ipv4 = false, own_ipv6 = false;

	if (!port || have->wg_error || (have->wg && have->wg->listen_port == port) ||
	    fabric_renamed(have, want->owner))
		return; /* the fabric renamed by hand holds it, and gets its name back */
	/* another's wgfab0 (its name's conflict says so) likely holds it: not "another socket" */
	if (wg && !link_is_owned(wg, want->owner) && !have->wg_adopt)
		return;
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];

		if (strcmp(l->kind, "vxlan") || l->port != port || !(l->flags & IFF_UP))
			continue;
		if (!link_is_owned(l, want->owner)) {
			diag_add(diag, "fabric " FABRIC_IFNAME,
				 "listen port %u is taken by VXLAN device %s, which fabricd does "
				 "not own; give it another dstport or take it down, or give this "
				 "node another port (nodes[i].listen_port in the definition)",
				 port, l->name);
			return;
		}
		own_ipv4 |= !l->vxlan_ipv6;
		own_ipv6 |= l->vxlan_ipv6;
	}
	if (udp_port_held(port, own_ipv4, own_ipv6) && !own_fabric_renamed(want, have, port, diag))
		diag_add(diag, "fabric " FABRIC_IFNAME,
			 "listen port %u is taken: another socket on this node has it (another "
			 "WireGuard device? see ss -ulpn 'sport = :%u'); free it, or give this "
			 "node another port (nodes[i].listen_port in the definition)",
			 port, port);
}

/* One UDP socket the vnets' devices want: a port in a family, and the first device on it. */
struct vxlan_socket {
	uint16_t port;
	int family;
	const char *name;
};

/*
 * Whether what holds port in family is one the plan lives with: a VXLAN
 * device that is up (the kernel shares its socket; a foreign one that cannot
 * is check_port's), or the fabric device, which leaves a port the vnets want
 * before they are made (kinds/fabric.c).
 */
static bool vxlan_port_shared(const struct observed *have, uint16_t port, int family)
{
	if (have->wg && have->wg->listen_port == port)
		return true;
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];

		if (!strcmp(l->kind, "vxlan") && (l->flags & IFF_UP) &&
		    same_socket(l, port, family))
			return true;
	}
	return false;
}

static void check_vxlan_socket(const struct node_state *want, const struct observed *have,
			       const struct vxlan_socket *s, struct diag *diag)
{
	bool secure = s->port == want->fabric.secure_port;
	char path[64];

	if (vxlan_port_shared(have, s->port, s->family) ||
	    !udp_port_held(s->port, s->family != AF_INET, s->family != AF_INET6))
		return;
	snprintf(path, sizeof(path), "vxlan %s", s->name);
	diag_add(diag, path,
		 "UDP port %u (%s) is taken: another socket on this node has it (see ss -ulpn "
		 "'sport = :%u'); free it%s",
		 s->port, secure ? "fabric.secure_port" : "plain VXLAN", s->port,
		 secure ? ", or give fabric.secure_port another port" : "");
}

/*
 * A VXLAN port the vnets want (4789, fabric.secure_port) that another socket
 * holds: apply would remove the devices to be made again on it, then fail to
 * bring the new ones up (EADDRINUSE) on every pass, the zone cut meanwhile.
 * Each port and family once: a bind is tried only where no device has it.
 */
static void check_vxlan_ports(const struct node_state *want, const struct observed *have,
			      struct diag *diag)
{
	struct vxlan_socket seen[8];
	size_t n = 0;

	for (size_t i = 0; i < want->n_vnets; i++) {
		const struct desired_vnet *v = &want->vnets[i];

		for (int k = 0; k <= (int)v->standby; k++) {
			struct vxlan_socket s = {k ? v->other_port : v->port,
						 k ? v->other_local.family : v->local.family,
						 k ? v->other_vxlan : v->vxlan};
			bool known = false;

			for (size_t j = 0; j < n && !known; j++)
				known = seen[j].port == s.port && seen[j].family == s.family;
			if (known || !s.port || n == sizeof(seen) / sizeof(seen[0]))
				continue;
			seen[n++] = s;
			check_vxlan_socket(want, have, &s, diag);
		}
	}
}

static bool foreign_vxlan(const struct link_obs *l, const char *owner)
{
	return !strcmp(l->kind, "vxlan") && !link_is_owned(l, owner);
}

/*
 * The vnet's bridge renamed by hand, which gets its name back: a new bridge
 * would leave the guests' ports on the renamed one. Only a rename the
 * daemon saw happen counts: in the kernel's state alone it looks like a vnet
 * removed and its VNI given to a new one, where naming the old bridge after
 * the new vnet would put the old tenant's guests into the new tenant. One
 * renamed to a name the definition wants is a conflict (check_renames).
 */
const struct link_obs *renamed_bridge(const struct node_state *want, const struct desired_vnet *v,
				      const struct observed *have)
{
	for (size_t i = 0; i < have->n_renamed; i++) {
		const struct link_obs *br = link_by_index(&have->links, have->renamed[i].ifindex);

		if (!strcmp(have->renamed[i].from, v->name) && br && !strcmp(br->kind, "bridge") &&
		    link_is_owned(br, want->owner))
			return br;
	}
	return NULL;
}

/* Whether name is one the definition gives a link of this node. */
static bool wanted_name(const struct node_state *want, const char *name)
{
	if (!strcmp(name, FABRIC_IFNAME))
		return true;
	for (size_t i = 0; i < want->n_vnets; i++) {
		const struct desired_vnet *v = &want->vnets[i];

		if (!strcmp(v->name, name) || !strcmp(v->vxlan, name) ||
		    !strcmp(v->other_vxlan, name))
			return true;
	}
	return false;
}

/*
 * A bridge of fabricd's renamed by hand to a name the definition wants (two
 * bridges' names swapped, say): taken for that name's, it would join one
 * tenant's guests to another's vnet. A conflict until it is renamed back.
 * A VXLAN device carries no guests: one under another's name has the other
 * VNI or port, and is made again like any device that does.
 */
static void check_renames(const struct node_state *want, const struct observed *have,
			  struct diag *diag)
{
	for (size_t i = 0; i < have->n_renamed; i++) {
		const struct link_rename *r = &have->renamed[i];
		const struct link_obs *l = link_by_index(&have->links, r->ifindex);

		if (!l || strcmp(l->kind, "bridge") || !link_is_owned(l, want->owner) ||
		    !wanted_name(want, l->name))
			continue;
		diag_add(diag, l->name,
			 "this %s was %s until it was renamed by hand; fabricd does not take it "
			 "for %s (whose guests are on it is not known): rename it back (ip link "
			 "set dev %s down; ip link set dev %s name %s; ip link set dev %s up; "
			 "through another name first where that one is taken)",
			 l->kind[0] ? l->kind : "link", r->from, l->name, l->name, l->name, r->from,
			 r->from);
	}
}

/*
 * Wanted names held by links fabricd does not own, and VNIs held by foreign
 * devices. The foreign VXLAN devices are found once (usually there are
 * none), not among all links for every vnet. With held, a vnet's own
 * conflicts hold that vnet instead (warnings).
 */
int check_conflicts(const struct node_state *want, const struct observed *have, struct diag *diag,
		    bool *held, const bool *holdable)
{
	const struct link_obs **foreign = NULL;
	size_t n = 0;

	for (size_t j = 0; j < have->links.n; j++)
		n += foreign_vxlan(&have->links.links[j], want->owner);
	if (n && !(foreign = malloc(n * sizeof(*foreign))))
		return -ENOMEM;
	n = 0;
	for (size_t j = 0; foreign && j < have->links.n; j++) {
		if (foreign_vxlan(&have->links.links[j], want->owner))
			foreign[n++] = &have->links.links[j];
	}
	for (size_t i = 0; i < want->n_vnets; i++) {
		size_t before = diag->n;

		check_names(&want->vnets[i], have, want->owner, diag);
		for (size_t j = 0; j < n; j++)
			check_vni(&want->vnets[i], foreign[j], have, diag);
		if (held && diag->n > before && (!holdable || holdable[i])) {
			char suffix[128];

			snprintf(suffix, sizeof(suffix),
				 " (fabricd leaves vnet %s as it is until then; the rest of the "
				 "node is kept)",
				 want->vnets[i].name);
			held[i] = true;
			diag_demote(diag, before, suffix);
		}
	}
	for (size_t j = 0; j < n; j++)
		check_port(want, foreign[j], diag);
	free(foreign);
	check_listen_port(want, have, diag);
	check_vxlan_ports(want, have, diag);
	check_renames(want, have, diag);
	firewall_conflict(have->firewall, want->owner, diag);
	return 0;
}
