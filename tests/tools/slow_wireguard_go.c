// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * slow_wireguard_go - a wireguard-go that takes its time to come up, for
 * tests/integration/test_adopt.py. Put first on PATH as "wireguard-go", it
 * makes the TUN link at once (wireguard-go's own first step), waits
 * SLOW_WG_DELAY_MS milliseconds (default 2000) and then becomes the real
 * /usr/bin/wireguard-go on that TUN (WG_TUN_FD), which only then opens its
 * socket. Meanwhile a fabricd sees the link with no one answering for it,
 * the window a fabricd killed while starting wireguard-go leaves behind on a
 * loaded machine, made wide enough to hit every time. Its command line is
 * wireguard-go's ("wireguard-go IFNAME") throughout, as fabricd checks.
 */
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define REAL_WIREGUARD_GO "/usr/bin/wireguard-go"

int main(int argc, char **argv)
{
	const char *delay = getenv("SLOW_WG_DELAY_MS");
	struct ifreq ifr = {.ifr_flags = IFF_TUN | IFF_NO_PI};
	char fd_text[16];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: wireguard-go IFNAME\n");
		return 2;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	fd = open("/dev/net/tun", O_RDWR); /* not close-on-exec: wireguard-go takes it over */
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0) {
		perror("slow wireguard-go: /dev/net/tun");
		return 1;
	}
	usleep((useconds_t)(delay ? atoi(delay) : 2000) * 1000);
	snprintf(fd_text, sizeof(fd_text), "%d", fd);
	setenv("WG_TUN_FD", fd_text, 1);
	execv(REAL_WIREGUARD_GO, argv);
	perror("slow wireguard-go: " REAL_WIREGUARD_GO);
	return 127;
}
