/* run_tests — the CUnit runner. Exits non-zero when any assertion failed: CU_get_error() alone
 * reports framework errors only and lets failing tests pass. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests.h"

int add_suite(const char *name, const struct test_case *cases, int n)
{
	CU_pSuite s = CU_add_suite(name, NULL, NULL);
	if (!s)
		return -1;
	for (int i = 0; i < n; i++)
		if (!CU_add_test(s, cases[i].name, cases[i].fn))
			return -1;
	return 0;
}

const char *model_path(const char *file)
{
	static char buf[4][512];
	static int i;
	const char *dir = getenv("TIERPLAN_CONFIGS");
	char *b = buf[i++ % 4];
	snprintf(b, sizeof buf[0], "%s/models/%s", dir ? dir : "configs", file);
	return b;
}

int main(void)
{
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 4;
	if (suite_units() || suite_arch() || suite_job() || suite_layout() || suite_catalog() ||
	    suite_plan() || suite_engine() ||
	    suite_sim() || suite_calibrate()) {
		fprintf(stderr, "cannot register tests: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 4;
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
	printf("\n%u passed, %u failed\n", CU_get_number_of_tests_run() - CU_get_number_of_tests_failed(),
	       CU_get_number_of_tests_failed());
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
