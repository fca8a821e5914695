/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/link.h - network interfaces as the kernel reports them (one RTM_GETLINK
 * dump), with the VXLAN and bridge-port details fabricd diffs against, and
 * the encoders shared by every link kind (change, delete).
 */
#ifndef FABRICD_LINK_H
#define FABRICD_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "netlink/nl.h"

/* The longest alias fabricd writes, with its NUL (the kernel keeps up to 255 bytes). */
#define LINK_ALIAS_MAX 256

struct link_obs {
	int ifindex;
	char name[16];
	char kind[16];	     /* IFLA_INFO_KIND: "bridge", "vxlan", "wireguard", "tun", ... */
	char slave_kind[16]; /* "bridge" when enslaved to a bridge */
	/*
	 * IFLA_IFALIAS; read it with link_alias() (NULL means none). In a
	 * link_table the table owns it (link_table_free frees it); link_parse
	 * leaves it pointing into the message, valid as long as that is. Not a
	 * 256-byte array: the daemon keeps 2,563 links at 64 nodes x 1024
	 * vnets, whose aliases are a few dozen bytes (README, "Scale").
	 */
	const char *alias;
	unsigned int mtu;
	int master;	    /* ifindex, 0 = none */
	unsigned int flags; /* IFF_* */
	uint32_t group;	    /* IFLA_GROUP: LINK_GROUP_OWNED for the links fabricd made */
	bool isolated;	    /* bridge port option */
	/* the bridge port's IFLA_BRPORT_STATE (BR_STATE_*), when port_state_known */
	uint8_t port_state;
	bool port_state_known;
	uint8_t port_mcast_router; /* IFLA_BRPORT_MULTICAST_ROUTER (MDB_RTR_TYPE_*) */
	/* bridge port learning, and its flooding: LINK_FLOOD_* bits of what is on */
	bool port_learning;
	unsigned int port_flood;
	/*
	 * IFLA_BRPORT_LOCKED, which fabricd never sets: frames from a source MAC
	 * without a user entry are dropped, the whole segment behind the port
	 */
	bool port_locked;
	/*
	 * IFLA_BRPORT_NEIGH_SUPPRESS, which fabricd never sets: ARP and ND
	 * announcements (duplicate address detection, gratuitous ARP) no longer
	 * reach the other nodes
	 */
	bool port_neigh_suppress;
	/* a VXLAN device reported with learning off */
	bool vxlan_nolearning;
	/* a bridge running STP (IFLA_BR_STP_STATE): fabricd's never do */
	bool bridge_stp;
	/*
	 * IFLA_INET6_ADDR_GEN_MODE, when the link has IPv6 state: the kernel
	 * drops it under 1280 bytes and makes it anew, eui64 and a link-local
	 * address, when the MTU comes back (addr_gen_known false in between).
	 */
	bool addr_gen_known;
	uint8_t addr_gen_mode;
	/*
	 * How a VXLAN device receives, for the kernel's rules on sharing a UDP
	 * port: an IPv6 device has a socket of its own family; an external
	 * (collect-metadata) one takes both families; one with receive options
	 * fabricd's devices never set (external, vnifilter, gbp, gpe, remote
	 * checksum offload, zero IPv6 checksums) cannot share a socket with them.
	 */
	bool vxlan_ipv6, vxlan_external, vxlan_other_rx;
	/* VXLAN only */
	uint32_t vni;
	uint16_t port;
	struct ip_addr local;
	int vxlan_link;	   /* underlying device, 0 = none */
	uint8_t vxlan_ttl; /* 0: the route's hop limit, as fabricd makes them */
};

/* One entry of a link table's name index: the name, and where its link is in links[]. */
struct link_name_ix {
	char name[16];
	uint32_t at;
};

struct link_table {
	size_t n;
	struct link_obs *links;
	/*
	 * The links by name (link_table_index), for link_find's bisection; in
	 * force while n_by_name == n. Whoever changes links[] afterwards (a
	 * link added, removed or renamed) calls link_table_index again; a
	 * table that was never indexed is searched linearly.
	 */
	struct link_name_ix *by_name;
	size_t n_by_name;
};

static inline const char *link_alias(const struct link_obs *l)
{
	return l->alias ? l->alias : "";
}

/* A copy of l's alias, owned by l from now on (as a table's links own theirs). 0 or -ENOMEM. */
int link_own_alias(struct link_obs *l);
/* Replaces the alias of a link a table owns. 0 or -ENOMEM (the old one stays). */
int link_set_alias(struct link_obs *l, const char *alias);
/* Frees what a table's link owns (its alias). */
void link_release(struct link_obs *l);
void link_table_free(struct link_table *t);
/* Builds (or rebuilds) t's name index; -ENOMEM leaves t without one (link_find then scans). */
int link_table_index(struct link_table *t);
const struct link_obs *link_find(const struct link_table *t, const char *name);
const struct link_obs *link_by_index(const struct link_table *t, int ifindex);

/* A link is owned when its alias is the owner mark, optionally followed by " ..." notes. */
bool link_is_owned(const struct link_obs *l, const char *owner);

/* Bridge port flooding, as IFLA_BRPORT_{UNICAST,MCAST,BCAST}_FLOOD report it. */
#define LINK_FLOOD_UNICAST 1U
#define LINK_FLOOD_MCAST   2U
#define LINK_FLOOD_BCAST   4U
#define LINK_FLOOD_ALL	   7U

/*
 * Owned links may carry a stage note after the owner mark: "KEY=EPOCH
 * grace=SECONDS at=BOOTTIME", the deadline of a transport switch's stage
 * (engine/switch.c): "retire-after=" on a plain device a vnet has left (it
 * only receives until then, then goes), "secure-until=" on the secure device
 * of a vnet that went back to plain (it still sends until then). EPOCH is
 * the wall-clock deadline (for people, and for notes written before at=
 * existed); at= is the same deadline in CLOCK_BOOTTIME seconds, which a clock
 * step does not move. A link never survives a reboot, so a boottime deadline
 * is always of this boot; a restarted fabricd reads it back from the alias.
 * grace= is the grace period the deadline was set with.
 */
struct stage_note {
	long long after;    /* epoch seconds */
	long long at;	    /* CLOCK_BOOTTIME seconds, 0 when the note has none */
	unsigned int grace; /* 0 when the note has none */
};
#define LINK_RETIRE_NOTE "retire-after="
#define LINK_HOLD_NOTE	 "secure-until="
/* an EVPN vnet's one device (engine/switch.c): moved to secure, its clear text still taken */
#define LINK_CLEAR_NOTE "clear-until="
/* moved to plain, it still carries its VXLAN through WireGuard */
#define LINK_CARRY_NOTE "carry-until="
/* True when l is owned and carries the note key (e.g. LINK_RETIRE_NOTE), filled into n. */
bool link_stage_note(const struct link_obs *l, const char *owner, const char *key,
		     struct stage_note *n);

/*
 * Whether fabricd's link l needs its IPv6 address generation set to none
 * again with a change that leaves its MTU at mtu: the kernel dropped its IPv6
 * state under 1280 bytes and made it anew, eui64 with a link-local address,
 * when the MTU came back (or will, with this change). The link-local address
 * the kernel made then is removed after the change (engine/linklocal.c).
 */
bool link_addrgen_again(const struct link_obs *l, unsigned int mtu);
/* What such a change says (a kind's describe). */
#define LINK_ADDRGEN_TEXT "addrgenmode none again, no IPv6 link-local address"

/* Parses one RTM_NEWLINK message into l; 0 or -EINVAL. Exposed for the dump fuzzer. */
int link_parse(const struct nlmsghdr *nlh, struct link_obs *l);

/*
 * Parses a bridge port's AF_BRIDGE RTM_NEWLINK notification into l: its
 * ifindex, name, flags, MTU, master and the port options of IFLA_PROTINFO
 * (the fields parse_brport_data fills from a dump). 1 when it held them, 0
 * when it is no port's (a bridge's own), -EINVAL when it is no such message.
 */
int link_parse_port(const struct nlmsghdr *nlh, struct link_obs *l);

/* Whether a and b, the same bridge port, agree in everything link_parse_port fills. */
bool link_port_same(const struct link_obs *a, const struct link_obs *b);

enum link_change_mask {
	LINK_SET_MTU = 1U << 0,
	LINK_SET_MASTER = 1U << 1,
	LINK_SET_UP = 1U << 2,
	LINK_SET_ALIAS = 1U << 3,
	LINK_SET_ISOLATED = 1U << 4,
	/* no IPv6 link-local address: a vnet's own bridge and VXLAN port stay silent in it */
	LINK_SET_NO_ADDRGEN = 1U << 5,
	LINK_SET_LEARNING = 1U << 6,	  /* bridge port learning on or off */
	LINK_SET_FLOOD = 1U << 7,	  /* bridge port flooding (all three kinds) on or off */
	LINK_SET_FLUSH = 1U << 8,	  /* the port's learned bridge entries flushed */
	LINK_SET_GROUP = 1U << 9,	  /* the interface group (IFLA_GROUP) */
	LINK_SET_FORWARDING = 1U << 10,	  /* the bridge port's state back to forwarding */
	LINK_SET_MCAST_ROUTER = 1U << 11, /* the bridge port a permanent multicast router port */
	LINK_SET_NO_STP = 1U << 12,	  /* a bridge's STP off */
	LINK_SET_NAME = 1U << 13,     /* renamed to op.ifname (down first, as the kernel needs) */
	LINK_SET_UNLOCKED = 1U << 14, /* the bridge port's locked off */
	LINK_SET_NO_NEIGH_SUPPRESS = 1U << 15, /* the bridge port's neigh_suppress off */
};

/*
 * The interface group of every link fabricd creates (`ip link show group
 * 64177`): down deletes them in one message when the group holds nothing
 * else (the kernel then unregisters them together, with one RCU wait for all
 * instead of one per link). Ownership is still the alias: a link in this
 * group without fabricd's mark is never deleted.
 */
#define LINK_GROUP_OWNED 64177U
/*
 * The group a pass moves the links it deletes into, to delete them in one
 * message as well (engine/link_group.c); a link in it that is not fabricd's
 * is never deleted (the pass then deletes its links one by one). Nothing
 * stays in it: fabricd's links are in it only between a move and the delete.
 */
#define LINK_GROUP_DELETING 64178U

struct link_change {
	unsigned int mask;
	unsigned int mtu;
	int master; /* ifindex */
	bool isolated;
	bool learning;
	bool flood;
	uint32_t group;
	char name[16]; /* LINK_SET_NAME: the new name */
	char alias[LINK_ALIAS_MAX];
};

/*
 * RTM_NEWLINK without NLM_F_CREATE for an existing link, carrying only what
 * changes. The link is named by ifindex when known, else by name (a link
 * made earlier in the same batch).
 */
void link_put_change(struct nlmsghdr *nlh, int ifindex, const char *name,
		     const struct link_change *c);
void link_put_delete(struct nlmsghdr *nlh, int ifindex, const char *name);
/* RTM_DELLINK body deleting every link of an interface group (`ip link delete group N`). */
void link_put_group_delete(struct nlmsghdr *nlh, uint32_t group);

#endif
