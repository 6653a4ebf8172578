/* tests — shared declarations of the CUnit suites (one file per module, as the source tree). */
#ifndef TIERPLAN_TESTS_H
#define TIERPLAN_TESTS_H

#include <CUnit/CUnit.h>

/* Each suite registers itself; 0 ok. */
int suite_units(void);
int suite_arch(void);
int suite_job(void);
int suite_layout(void);
int suite_catalog(void);
int suite_plan(void);
int suite_engine(void);
int suite_sim(void);
int suite_calibrate(void);

/* Adds the named tests to a new suite; returns -1 on a CUnit error. */
struct test_case {
	const char *name;
	void (*fn)(void);
};
int add_suite(const char *name, const struct test_case *cases, int n);

/* Path of a catalog model's config.json ("llama-3.1-70b.json" -> configs/models/...). */
const char *model_path(const char *file);

#define ASSERT_NEAR_REL(a, b, rel) CU_ASSERT(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)))

#endif
