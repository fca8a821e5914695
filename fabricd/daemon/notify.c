// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon/notify.c - the sd_notify(3) datagram protocol on $NOTIFY_SOCKET. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "daemon/notify.h"

int notify_open(struct notify *n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	if (!path || !*path)
		return 0;
	len = strlen(path);
	/* vsock ("vsock:CID:PORT") is for virtual machines' managers; a host service never gets it
	 */
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(n->addr.sun_path)) {
		log_warn("NOTIFY_SOCKET \"%s\": not a socket path or @name; the service "
			 "manager will not hear that fabricd is ready",
			 path);
		unsetenv("NOTIFY_SOCKET");
		return -EINVAL;
	}
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, path, len);
	if (path[0] == '@')
		n->addr.sun_path[0] = '\0'; /* abstract: the name's length, not a NUL, ends it */
	n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	unsetenv("NOTIFY_SOCKET");
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->fd < 0) {
		int ret = -errno;

		log_warn("NOTIFY_SOCKET: cannot create a socket: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

int notify_send(struct notify *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int len;

	if (n->fd < 0)
		return 0;
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len < 0)
		return -EINVAL;
	if ((size_t)len >= sizeof(msg))
		len = sizeof(msg) - 1;
	/*
	 * Never wait for the service manager: a full notification socket must
	 * not stall the daemon that keeps the fabric converged (a lost STATUS=
	 * line is harmless; the next one replaces it).
	 */
	if (sendto(n->fd, msg, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT,
		   (struct sockaddr *)&n->addr, n->addr_len) < 0)
		return -errno;
	return 0;
}

void notify_close(struct notify *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}
