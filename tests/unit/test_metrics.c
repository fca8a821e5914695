// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_metrics.c - the Prometheus text of daemon/metrics_text.c, the
 * --metrics address parser, the probe frame encoding, and the memory of
 * the daemon's metrics tick at 64 nodes and 1024 vnets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <string.h>

#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/probe_frame.h"
#include "unit.h"

static void test_render(void)
{
	struct metrics_peer peers[] = {
	    {.name = "pve2",
	     .present = true,
	     .latest_handshake = 1000,
	     .rx_bytes = 5,
	     .tx_bytes = 7,
	     .endpoint_changes = 1},
	    {.name = "pve3", .present = true},
	};
	struct metrics_probe probes[] = {
	    {.peer = "pve2",
	     .zone = "red",
	     .transport = "plain",
	     .reachable = true,
	     .black_hole = true,
	     .rtt_seconds = 0.0005,
	     .mtu = 1450,
	     .largest = 1350},
	    {.peer = "pve3", .zone = "red", .transport = "plain"},
	};
	struct metrics_zone zones[] = {{.name = "red",
					.transport = "plain",
					.mtu_policy = "stable",
					.mtu = 1390,
					.n_vnets = 2}};
	struct metrics_vnet vnets[] = {
	    {.name = "vnet100",
	     .device = "vx100",
	     .zone = "red",
	     .vni = 100,
	     .present = true,
	     .rx_packets = 11,
	     .tx_bytes = 12345678901ULL},
	    {.name = "vnet101", .device = "vx101", .zone = "red", .vni = 101},
	};
	struct metrics_repair repairs[] = {{.kind = "vxlan", .count = 3}};
	struct metrics_data d = {
	    .version = "v\"1\\",
	    .cluster = "lab",
	    .node = "pve1",
	    .fabric_present = true,
	    .fabric_mtu = 1440,
	    .n_peers = 2,
	    .peers = peers,
	    .n_probes = 2,
	    .probes = probes,
	    .n_zones = 1,
	    .zones = zones,
	    .n_vnets = 2,
	    .vnets = vnets,
	    .guard_present = true,
	    .guard_counter_present = {true, true, false, true},
	    .guard = {{.packets = 4, .bytes = 400}},
	    .passes = 5,
	    .pass_errors = 1,
	    .duration_buckets = {1, 2, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5},
	    .duration_sum = 1.5,
	    .n_repairs = 1,
	    .repairs = repairs,
	    .scrape_timestamp = 1010.4,
	    .heap_in_use_bytes = 7340032,
	};
	struct metrics_text out = {0};
	const char *text;
	size_t len;

	CHECK_INT(metrics_render(&d, &out), 0, "render");
	text = out.text;
	len = out.len;
	CHECK_INT(len, strlen(text), "length without the NUL");
#define HAS(s)	 CHECK(strstr(text, s) != NULL, "missing: %s", s)
#define LACKS(s) CHECK(strstr(text, s) == NULL, "unexpected: %s", s)
	HAS("fabricd_build_info{version=\"v\\\"1\\\\\",cluster=\"lab\",node=\"pve1\"} 1\n");
	HAS("# TYPE fabricd_peer_receive_bytes_total counter\n");
	HAS("fabricd_peer_receive_bytes_total{peer=\"pve2\"} 5\n");
	HAS("fabricd_peer_latest_handshake_timestamp_seconds{peer=\"pve3\"} 0\n");
	HAS("fabricd_peer_latest_handshake_age_seconds{peer=\"pve2\"} 10\n");
	LACKS("fabricd_peer_latest_handshake_age_seconds{peer=\"pve3\"}");
	HAS("fabricd_peer_endpoint_changes_total{peer=\"pve2\"} 1\n");
	HAS("fabricd_probe_mtu_black_hole{peer=\"pve2\",zone=\"red\",transport=\"plain\"} 1\n");
	HAS("fabricd_probe_largest_passing_bytes{peer=\"pve2\",zone=\"red\",transport=\"plain\"} "
	    "1350\n");
	HAS("fabricd_probe_reachable{peer=\"pve3\",zone=\"red\",transport=\"plain\"} 0\n");
	HAS("fabricd_probe_rtt_seconds{peer=\"pve2\",zone=\"red\",transport=\"plain\"} 0.000500\n");
	LACKS("fabricd_probe_rtt_seconds{peer=\"pve3\"");
	HAS("fabricd_zone_info{zone=\"red\",transport=\"plain\",mtu_policy=\"stable\"} 1\n");
	HAS("fabricd_zone_vnets{zone=\"red\"} 2\n");
	HAS("fabricd_vnet_transmit_bytes_total{vnet=\"vnet100\",zone=\"red\",vni=\"100\","
	    "device=\"vx100\"} 12345678901\n");
	LACKS("vnet=\"vnet101\"");
	HAS("fabricd_guard_dropped_packets_total{counter=\"plain\"} 4\n");
	LACKS("counter=\"wireguard\"");
	HAS("fabricd_reconcile_duration_seconds_bucket{le=\"0.001\"} 1\n");
	HAS("fabricd_reconcile_duration_seconds_bucket{le=\"+Inf\"} 5\n");
	HAS("fabricd_reconcile_duration_seconds_count 5\n");
	HAS("fabricd_reconcile_errors_total 1\n");
	HAS("fabricd_drift_repairs_total{kind=\"vxlan\"} 3\n");
	HAS("# TYPE fabricd_heap_in_use_bytes gauge\n");
	HAS("fabricd_heap_in_use_bytes 7340032\n");
	CHECK(text[len - 1] == '\n', "ends with a newline");
	/* again into the same buffer: the same text, not appended */
	CHECK_INT(metrics_render(&d, &out), 0, "render again");
	CHECK_INT(out.len, len, "the same length");
	CHECK_INT(strlen(out.text), len, "one text, not two");
	metrics_text_free(&out);
}

static void test_listen(void)
{
	static const struct {
		const char *text;
		int family;
		const char *addr;
		unsigned int port;
	} good[] = {
	    {"9464", AF_INET, "127.0.0.1", 9464},    {":9464", AF_INET, "127.0.0.1", 9464},
	    {"0.0.0.0:80", AF_INET, "0.0.0.0", 80},  {"[::1]:9464", AF_INET6, "::1", 9464},
	    {"[fd00::1]:1", AF_INET6, "fd00::1", 1},
	};
	/* "::1" is no IPv6 host with a port: it needs brackets (it read as "::" port 1) */
	static const char *const bad[] = {"",	     "x",	    "1.2.3.4:",	   "1.2.3.4:65536",
					  "host:80", "[::1]:x",	    "1.2.3.4:80x", "::1",
					  " 9465",   "1.2.3.4:+80", "fd00::1:80"};
	struct sockaddr_storage ss;
	char err[160], addr[INET6_ADDRSTRLEN];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK_INT(metrics_parse_listen(good[i].text, &ss, err, sizeof(err)), 0, "%s: %s",
			  good[i].text, err);
		CHECK_INT(ss.ss_family, good[i].family, "%s", good[i].text);
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr,
				  sizeof(addr));
			CHECK_INT(ntohs(((struct sockaddr_in *)&ss)->sin_port), good[i].port, "%s",
				  good[i].text);
		} else {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr,
				  sizeof(addr));
			CHECK_INT(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), good[i].port,
				  "%s", good[i].text);
		}
		CHECK_STR(addr, good[i].addr, "%s", good[i].text);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_INT(metrics_parse_listen(bad[i], &ss, err, sizeof(err)), -EINVAL, "%s",
			  bad[i]);
		CHECK(strstr(err, "--metrics") != NULL, "%s: message \"%s\"", bad[i], err);
	}
}

static void test_probe_frame(void)
{
	struct probe_frame f = {.type = PROBE_REQUEST,
				.size = 1390,
				.seq = 0x01020304,
				.nonce = 99,
				.cluster = "lab",
				.sender = "pve1",
				.target = ""};
	struct probe_frame g;
	uint8_t buf[2000];

	CHECK_INT(probe_frame_encode(&f, buf, sizeof(buf)), 1390, "encode");
	CHECK_INT(probe_frame_decode(buf, 1390, &g), 0, "decode");
	CHECK_INT(g.type, PROBE_REQUEST, "type");
	CHECK_INT(g.seq, 0x01020304, "seq");
	CHECK_INT(g.nonce, 99, "nonce");
	CHECK_STR(g.cluster, "lab", "cluster");
	CHECK_STR(g.sender, "pve1", "sender");
	CHECK_STR(g.target, "", "target");
	CHECK_INT(probe_frame_decode(buf, 1389, &g), -EINVAL, "truncated");
	CHECK_INT(probe_frame_decode(buf, 1500, &g), 0, "padded by Ethernet");
	f.size = PROBE_HEADER_LEN - 1;
	CHECK_INT(probe_frame_encode(&f, buf, sizeof(buf)), 0, "smaller than the header");
	f.size = 1390;
	CHECK_INT(probe_frame_encode(&f, buf, 1000), 0, "does not fit");
	probe_frame_encode(&f, buf, sizeof(buf));
	buf[0] = 'X';
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "magic");
	buf[0] = 'F';
	buf[5] = 3;
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "type");
	buf[5] = PROBE_REPLY;
	buf[16] = '\n';
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "control character in a name");
	memset(buf + 16, 'a', 64);
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "name without its NUL");
}

/*
 * The memory of a tick at 64 nodes and 1024 vnets (63 peers, 64 zones x 63
 * probes, 1536 VXLAN devices: 2.7 MB of text here, 2.35 MB in the daemon):
 * rendered once a second in the daemon's loop and handed to the HTTP
 * thread. A new growing buffer and a copy for the HTTP thread each second
 * left the loop's heap 12 MiB resident with --metrics at that size (3
 * without), and libmicrohttpd's copy of each scrape (MHD_RESPMEM_MUST_COPY)
 * 2.3 MiB in the HTTP thread's arena; 30 ticks of this test, each scraped,
 * cost 12.8 MiB (5.9 of it after the second).
 * What a tick needs is its text twice (the one rendered, the one served),
 * and nothing more after two ticks.
 */
#define SCALE_PEERS 63
#define SCALE_ZONES 64
#define SCALE_VNETS 1536
#define TICKS	    30

static void scale_data(struct metrics_data *d)
{
	static struct metrics_peer peers[SCALE_PEERS];
	static struct metrics_probe probes[SCALE_PEERS * SCALE_ZONES];
	static struct metrics_zone zones[SCALE_ZONES];
	static struct metrics_vnet vnets[SCALE_VNETS];

	for (size_t i = 0; i < SCALE_PEERS; i++) {
		snprintf(peers[i].name, sizeof(peers[i].name), "n%zu", i + 2);
		peers[i].present = true;
		peers[i].latest_handshake = 1765000000;
		peers[i].rx_bytes = peers[i].tx_bytes = 123456789;
	}
	for (size_t z = 0; z < SCALE_ZONES; z++) {
		snprintf(zones[z].name, sizeof(zones[z].name), "%c%zu", z < 32 ? 'p' : 's', z % 32);
		zones[z].transport = z < 32 ? "plain" : "secure";
		zones[z].mtu_policy = "stable";
		zones[z].mtu = 1380;
		zones[z].n_vnets = 16;
		for (size_t i = 0; i < SCALE_PEERS; i++) {
			struct metrics_probe *p = &probes[z * SCALE_PEERS + i];

			snprintf(p->peer, sizeof(p->peer), "n%zu", i + 2);
			snprintf(p->zone, sizeof(p->zone), "%c%zu", z < 32 ? 'p' : 's', z % 32);
			p->transport = zones[z].transport;
			p->reachable = true;
			p->rtt_seconds = 0.000321;
			p->mtu = p->largest = 1380;
		}
	}
	for (size_t v = 0; v < SCALE_VNETS; v++) {
		snprintf(vnets[v].name, sizeof(vnets[v].name), "v%zu", 100000 + v % 1024);
		snprintf(vnets[v].device, sizeof(vnets[v].device), "vx%zu", 100000 + v);
		snprintf(vnets[v].zone, sizeof(vnets[v].zone), "p%zu", v / 16 % 64);
		vnets[v].vni = (uint32_t)(100000 + v);
		vnets[v].ifindex = (int)v + 2;
		vnets[v].present = true;
		vnets[v].rx_packets = vnets[v].tx_packets = 1234567;
		vnets[v].rx_bytes = vnets[v].tx_bytes = 1234567890;
	}
	*d = (struct metrics_data){.version = "1",
				   .cluster = "cpbench",
				   .node = "n1",
				   .fabric_present = true,
				   .fabric_mtu = 1440,
				   .n_peers = SCALE_PEERS,
				   .peers = peers,
				   .n_probes = SCALE_PEERS * SCALE_ZONES,
				   .probes = probes,
				   .n_zones = SCALE_ZONES,
				   .zones = zones,
				   .n_vnets = SCALE_VNETS,
				   .vnets = vnets,
				   .guard_present = true};
}

/* A GET /metrics on 127.0.0.1:port: the bytes of the answer, headers and all; -1 on errors. */
static long scrape(unsigned int port)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char buf[65536];
	long total = 0;
	ssize_t n;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
		total = -1;
	while (total >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	if (fd >= 0)
		close(fd);
	return total;
}

/*
 * TICKS of the daemon's loop (monitor_tick): rendered, handed to the HTTP
 * thread, scraped.
 */
static void test_tick_memory(void)
{
	struct metrics_text out = {0};
	struct metrics_data d;
	struct sockaddr_storage ss;
	struct metrics_http *h = NULL;
	char err[160];
	long before, two = 0, all;
	size_t len = 0;

	scale_data(&d);
	CHECK_INT(metrics_parse_listen("127.0.0.1:0", &ss, err, sizeof(err)), 0, "%s", err);
	if (metrics_http_start(&ss, &h) < 0) {
		printf("tick memory: libmicrohttpd not there, not measured\n");
		return;
	}
	before = unit_resident_kib();
	for (int i = 0; i < TICKS; i++) {
		CHECK_INT(metrics_render(&d, &out), 0, "render %d", i);
		len = out.len;
		metrics_http_publish(h, &out);
		CHECK(scrape(metrics_http_port(h)) > (long)len, "scrape %d: the whole text", i);
		if (i == 1)
			two = unit_resident_kib();
	}
	all = unit_resident_kib();
	metrics_http_stop(h);
	metrics_text_free(&out);
	printf("metrics ticks of %zu bytes: VmRSS %ld -> %ld (two) -> %ld KiB (%d)\n", len, before,
	       two, all, TICKS);
	CHECK(len > 2000000, "the scale's text is %zu bytes", len);
	if (unit_allocator_is_instrumented())
		return; /* resident sizes mean nothing there */
	/* two texts, the one rendered and the one served; nothing more after two ticks */
	CHECK(all - before < (long)(len * 2 / 1024) + 512, "%d ticks cost %ld KiB", TICKS,
	      all - before);
	CHECK(all - two < 256, "ticks 3-%d grew %ld KiB", TICKS, all - two);
}

int main(void)
{
	test_render();
	test_tick_memory();
	test_listen();
	test_probe_frame();
	return unit_summary("test_metrics");
}
