// SPDX-License-Identifier: GPL-2.0-or-later
/* test_mtu.c - the MTU rules of DESIGN.md "MTU", with its examples. */
#include <errno.h>
#include <sys/socket.h>

#include "definition/mtu.h"
#include "unit.h"

struct plan_case {
	const char *name;
	unsigned int underlay;
	int underlay_family, wg_family, fabric_family;
	unsigned int fabric, plain, secure, stable;
};

static const struct plan_case plans[] = {
    /* DESIGN: IPv4 everywhere, 1500 underlay */
    {"ipv4 1500", 1500, AF_INET, AF_INET, AF_INET, 1440, 1450, 1390, 1390},
    /* DESIGN: IPv6 underlay and IPv4 fabric */
    {"ipv6 underlay", 1500, AF_INET6, AF_INET6, AF_INET, 1420, 1430, 1370, 1370},
    {"jumbo 9000", 9000, AF_INET, AF_INET, AF_INET, 8940, 8950, 8890, 8890},
    {"jumbo ipv6", 9000, AF_INET6, AF_INET6, AF_INET, 8920, 8930, 8870, 8870},
    {"ipv6 fabric", 1500, AF_INET, AF_INET, AF_INET6, 1440, 1450, 1370, 1370},
    {"ipv6 all", 1500, AF_INET6, AF_INET6, AF_INET6, 1420, 1430, 1350, 1350},
    /* an IPv6 endpoint raises the WireGuard overhead, not the plain VXLAN one */
    {"ipv6 endpoint", 1500, AF_INET, AF_INET6, AF_INET, 1420, 1450, 1370, 1370},
    {"ipv6 minimum", 1280, AF_INET6, AF_INET6, AF_INET, 1200, 1210, 1150, 1150},
    {"pppoe 1492", 1492, AF_INET, AF_INET, AF_INET, 1432, 1442, 1382, 1382},
    {"smallest", MTU_MIN, AF_INET, AF_INET, AF_INET, 516, 526, 466, 466},
    {"largest", MTU_MAX, AF_INET, AF_INET, AF_INET, 65475, 65485, 65425, 65425},
};

static void test_overheads(void)
{
	CHECK_INT(mtu_wg_overhead(AF_INET), 60, "WireGuard over IPv4");
	CHECK_INT(mtu_wg_overhead(AF_INET6), 80, "WireGuard over IPv6");
	CHECK_INT(mtu_vxlan_overhead(AF_INET), 50, "VXLAN over IPv4");
	CHECK_INT(mtu_vxlan_overhead(AF_INET6), 70, "VXLAN over IPv6");
}

static void test_plans(void)
{
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		const struct plan_case *t = &plans[i];
		struct zone stable = {.mtu_policy = MTU_POLICY_STABLE};
		struct mtu_plan p;

		CHECK_INT(mtu_plan_compute(t->underlay, t->underlay_family, t->wg_family,
					   t->fabric_family, &p),
			  0, "%s", t->name);
		CHECK_INT(p.underlay, t->underlay, "%s: underlay", t->name);
		CHECK_INT(p.fabric, t->fabric, "%s: fabric", t->name);
		CHECK_INT(p.plain_max, t->plain, "%s: plain", t->name);
		CHECK_INT(p.secure_max, t->secure, "%s: secure", t->name);
		CHECK_INT(mtu_zone(&p, &stable, NULL), t->stable, "%s: stable", t->name);
	}
}

static void test_range(void)
{
	struct mtu_plan p;

	CHECK_INT(mtu_plan_compute(MTU_MIN - 1, AF_INET, AF_INET, AF_INET, &p), -EINVAL,
		  "below the minimum");
	CHECK_INT(mtu_plan_compute(MTU_MAX + 1, AF_INET, AF_INET, AF_INET, &p), -EINVAL,
		  "above the maximum");
	CHECK_INT(mtu_plan_compute(0, AF_INET, AF_INET, AF_INET, &p), -EINVAL, "zero");
}

/* stable gives both transports the same MTU; max gives each its own. */
static void test_policies(void)
{
	struct mtu_plan p;
	struct zone z = {.transport = TRANSPORT_PLAIN, .mtu_policy = MTU_POLICY_STABLE};
	unsigned int computed = 0;

	mtu_plan_compute(1500, AF_INET, AF_INET, AF_INET, &p);
	CHECK_INT(mtu_zone(&p, &z, &computed), 1390, "stable plain");
	CHECK_INT(computed, 1390, "stable plain computed");
	z.transport = TRANSPORT_SECURE;
	CHECK_INT(mtu_zone(&p, &z, NULL), 1390, "stable secure: switching changes nothing");
	z.mtu_policy = MTU_POLICY_MAX;
	CHECK_INT(mtu_zone(&p, &z, NULL), 1390, "max secure");
	z.transport = TRANSPORT_PLAIN;
	CHECK_INT(mtu_zone(&p, &z, &computed), 1450, "max plain");
	CHECK_INT(computed, 1450, "max plain computed");

	mtu_plan_compute(9000, AF_INET6, AF_INET6, AF_INET, &p);
	CHECK_INT(mtu_zone(&p, &z, NULL), 8930, "max plain, jumbo IPv6 underlay");
	z.transport = TRANSPORT_SECURE;
	CHECK_INT(mtu_zone(&p, &z, NULL), 8870, "max secure, jumbo IPv6 underlay");
}

/* A zone "mtu" only ever lowers the computed figure. */
static void test_override(void)
{
	struct mtu_plan p;
	struct zone z = {.transport = TRANSPORT_SECURE, .mtu_policy = MTU_POLICY_STABLE};
	unsigned int computed = 0;

	mtu_plan_compute(1500, AF_INET, AF_INET, AF_INET, &p);
	z.flags = ZONE_HAS_MTU;
	z.mtu = 1300;
	CHECK_INT(mtu_zone(&p, &z, &computed), 1300, "override lowers");
	CHECK_INT(computed, 1390, "computed before the override");
	z.mtu = 1390;
	CHECK_INT(mtu_zone(&p, &z, NULL), 1390, "override equal");
	z.mtu = 9000;
	CHECK_INT(mtu_zone(&p, &z, &computed), 1390, "override above is ignored");
	CHECK_INT(computed, 1390, "computed");
	z.flags = 0;
	z.mtu = 1000;
	CHECK_INT(mtu_zone(&p, &z, NULL), 1390, "mtu without ZONE_HAS_MTU is ignored");
	z.flags = ZONE_HAS_MTU;
	z.mtu_policy = MTU_POLICY_MAX;
	z.transport = TRANSPORT_PLAIN;
	z.mtu = 1400;
	CHECK_INT(mtu_zone(&p, &z, &computed), 1400, "override under max plain");
	CHECK_INT(computed, 1450, "max plain computed");
}

int main(void)
{
	test_overheads();
	test_plans();
	test_range();
	test_policies();
	test_override();
	return unit_summary("test_mtu");
}
