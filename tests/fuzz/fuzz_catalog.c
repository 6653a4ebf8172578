/* fuzz_catalog — libFuzzer target: one JSON object through the GPU, flash and host record
 * loaders and their price records (units, ranges, unknown keys). */
#include <cjson/cJSON.h>
#include <stdint.h>

#include "../../model/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union {
		struct cfg_gpu g;
		struct cfg_flash f;
		struct cfg_host h;
	} rec;
	char err[256];
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	if (!obj)
		return 0;
	for (int k = CFG_GPU; k <= CFG_HOST_PRICE; k++)
		(void)cfg_record_parse((enum cfg_kind)k, obj, "fuzz", &rec, err, sizeof err);
	cJSON_Delete(obj);
	return 0;
}
