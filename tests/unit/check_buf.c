/* tests/unit/check_buf.c - usl/buf: bounded readers and writers. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"

START_TEST(test_read_values)
{
	static const uint8_t pkt[] = {
		0xc8, 0x02,			/* u16 */
		0x12, 0x34, 0x56, 0x78,		/* u32 */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* u64 */
		0xab,				/* u8 */
		'h', 'i',
	};
	struct usl_rbuf r;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;
	uint8_t v8;
	char s[2];

	usl_rbuf_init(&r, pkt, sizeof(pkt));
	ck_assert_int_eq(usl_rbuf_u16(&r, &v16), 0);
	ck_assert_uint_eq(v16, 0xc802);
	ck_assert_int_eq(usl_rbuf_u32(&r, &v32), 0);
	ck_assert_uint_eq(v32, 0x12345678);
	ck_assert_int_eq(usl_rbuf_u64(&r, &v64), 0);
	ck_assert_uint_eq(v64, 0x0102030405060708ULL);
	ck_assert_int_eq(usl_rbuf_u8(&r, &v8), 0);
	ck_assert_uint_eq(v8, 0xab);
	ck_assert_uint_eq(usl_rbuf_left(&r), 2);
	ck_assert_int_eq(usl_rbuf_copy(&r, s, 2), 0);
	ck_assert(memcmp(s, "hi", 2) == 0);
	ck_assert_uint_eq(usl_rbuf_left(&r), 0);
	ck_assert_int_eq(usl_rbuf_u8(&r, &v8), -1);
}
END_TEST

START_TEST(test_short_reads_do_not_move)
{
	static const uint8_t pkt[] = { 1, 2, 3 };
	struct usl_rbuf r;
	uint16_t v16 = 0;
	uint32_t v32 = 7;
	uint64_t v64 = 7;
	uint8_t out[8];

	usl_rbuf_init(&r, pkt, sizeof(pkt));
	ck_assert_int_eq(usl_rbuf_u32(&r, &v32), -1);
	ck_assert_uint_eq(v32, 7);		/* untouched */
	ck_assert_uint_eq(r.off, 0);
	ck_assert_int_eq(usl_rbuf_u64(&r, &v64), -1);
	ck_assert_int_eq(usl_rbuf_copy(&r, out, 4), -1);
	ck_assert_ptr_null(usl_rbuf_take(&r, 4));
	ck_assert_int_eq(usl_rbuf_skip(&r, 4), -1);
	ck_assert_uint_eq(r.off, 0);
	ck_assert_int_eq(usl_rbuf_skip(&r, 1), 0);
	ck_assert_int_eq(usl_rbuf_u16(&r, &v16), 0);
	ck_assert_uint_eq(v16, 0x0203);
	ck_assert_int_eq(usl_rbuf_u16(&r, &v16), -1);
	ck_assert_uint_eq(r.off, 3);
	/* Huge lengths must not wrap the bounds check. */
	ck_assert_ptr_null(usl_rbuf_take(&r, SIZE_MAX));
	usl_rbuf_init(&r, pkt, sizeof(pkt));
	ck_assert_int_eq(usl_rbuf_skip(&r, SIZE_MAX), -1);
	ck_assert_ptr_eq(usl_rbuf_take(&r, 3), pkt);
	ck_assert_ptr_nonnull(usl_rbuf_take(&r, 0));
}
END_TEST

START_TEST(test_write_values)
{
	uint8_t buf[32];
	static const uint8_t want[] = {
		0x7f, 0x00, 0x10, 0xde, 0xad, 0xbe, 0xef,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 'o', 'k',
	};
	struct usl_wbuf w;

	usl_wbuf_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(usl_wbuf_u8(&w, 0x7f), 0);
	ck_assert_int_eq(usl_wbuf_u16(&w, 0x0010), 0);
	ck_assert_int_eq(usl_wbuf_u32(&w, 0xdeadbeef), 0);
	ck_assert_int_eq(usl_wbuf_u64(&w, 0x1122334455667788ULL), 0);
	ck_assert_int_eq(usl_wbuf_put(&w, "ok", 2), 0);
	ck_assert_uint_eq(w.len, sizeof(want));
	ck_assert(!w.overflow);
	ck_assert(memcmp(buf, want, sizeof(want)) == 0);
}
END_TEST

START_TEST(test_overflow)
{
	uint8_t buf[16];
	struct usl_wbuf w;

	memset(buf, 0xee, sizeof(buf));
	usl_wbuf_init(&w, buf, 6);
	ck_assert_int_eq(usl_wbuf_u32(&w, 1), 0);
	ck_assert_int_eq(usl_wbuf_u32(&w, 2), -1);	/* 4 + 4 > 6 */
	ck_assert(w.overflow);
	ck_assert_uint_eq(w.len, 4);
	ck_assert_uint_eq(buf[4], 0xee);		/* nothing written past len */
	/* Sticky: even a write that would fit is refused afterwards. */
	ck_assert_int_eq(usl_wbuf_u8(&w, 9), -1);
	ck_assert_uint_eq(w.len, 4);
	ck_assert_uint_eq(buf[4], 0xee);

	usl_wbuf_init(&w, buf, 6);
	ck_assert_ptr_nonnull(usl_wbuf_reserve(&w, 6));
	ck_assert(!w.overflow);
	ck_assert_ptr_null(usl_wbuf_reserve(&w, 1));
	ck_assert(w.overflow);

	usl_wbuf_init(&w, buf, 6);
	ck_assert_int_eq(usl_wbuf_put(&w, buf + 8, SIZE_MAX), -1);
	ck_assert(w.overflow);
	ck_assert_uint_eq(w.len, 0);
	ck_assert_uint_eq(buf[6], 0xee);
}
END_TEST

START_TEST(test_patch_u16)
{
	uint8_t buf[8];
	struct usl_wbuf w;

	usl_wbuf_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(usl_wbuf_u16(&w, 0), 0);	/* length placeholder */
	ck_assert_int_eq(usl_wbuf_u32(&w, 0xaabbccdd), 0);
	usl_wbuf_patch_u16(&w, 0, (uint16_t)w.len);
	ck_assert(!w.overflow);
	ck_assert_uint_eq(usl_get_be16(buf), 6);
	ck_assert_uint_eq(usl_get_be32(buf + 2), 0xaabbccdd);
	usl_wbuf_patch_u16(&w, 4, 0x1234);		/* the last two bytes written */
	ck_assert(!w.overflow);
	ck_assert_uint_eq(usl_get_be16(buf + 4), 0x1234);
	/* Patching past what was written is refused and flagged. */
	usl_wbuf_patch_u16(&w, 5, 0xffff);
	ck_assert(w.overflow);
	ck_assert_uint_eq(usl_get_be16(buf + 4), 0x1234);
	usl_wbuf_init(&w, buf, sizeof(buf));
	usl_wbuf_patch_u16(&w, SIZE_MAX, 1);
	ck_assert(w.overflow);
}
END_TEST

START_TEST(test_be_helpers)
{
	uint8_t b[4];

	usl_put_be16(b, 0xbeef);
	ck_assert_uint_eq(b[0], 0xbe);
	ck_assert_uint_eq(usl_get_be16(b), 0xbeef);
	usl_put_be32(b, 0x01020304);
	ck_assert_uint_eq(b[3], 0x04);
	ck_assert_uint_eq(usl_get_be32(b), 0x01020304);
}
END_TEST

static Suite *buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_read_values);
	tcase_add_test(tc, test_short_reads_do_not_move);
	tcase_add_test(tc, test_write_values);
	tcase_add_test(tc, test_overflow);
	tcase_add_test(tc, test_patch_u16);
	tcase_add_test(tc, test_be_helpers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(buf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
