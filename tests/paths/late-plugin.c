// SPDX-License-Identifier: MIT
/*
 * late-plugin.c: a plugin that late-host dlopen()s with RTLD_LOCAL, the way a database
 * loads a storage engine. It links liburing and libaio itself, so the program under the
 * shim had neither when the shim resolved its symbols.
 */
#include <fcntl.h>
#include <libaio.h>
#include <liburing.h>
#include <unistd.h>

/* From the calling thread: one io_uring read and one libaio read of @path. */
int plugin_run(const char *path, int *uring_ioprio, int *aio_ioprio);

int plugin_run(const char *path, int *uring_ioprio, int *aio_ioprio)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct iocb cb, *p = &cb;
	struct io_event ev;
	struct io_uring ring;
	io_context_t ctx = 0;
	char buf[512];
	int fd = open(path, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = io_uring_queue_init(4, &ring, 0);
	if (ret < 0)
		return ret;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
	ret = io_uring_submit(&ring);
	*uring_ioprio = sqe->ioprio;
	if (ret == 1 && io_uring_wait_cqe(&ring, &cqe) == 0)
		io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	if (ret != 1)
		return ret < 0 ? ret : -1;

	ret = io_setup(4, &ctx);
	if (ret < 0)
		return ret;
	io_prep_pread(&cb, fd, buf, sizeof(buf), 0);
	ret = io_submit(ctx, 1, &p);
	*aio_ioprio = (cb.u.c.flags & (1 << 1)) ? cb.aio_reqprio : 0; /* IOCB_FLAG_IOPRIO */
	if (ret == 1)
		io_getevents(ctx, 1, 1, &ev, NULL);
	io_destroy(ctx);
	close(fd);
	return ret == 1 ? 0 : ret;
}
