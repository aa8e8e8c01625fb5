/*
 * src/dp.c - the data plane registry: main.c picks one by name
 * (`--dataplane`, `global.dataplane`).
 */
#include <string.h>

#include "dp.h"

const struct dp_ops *dp_find(const char *name)
{
	static const struct dp_ops *const all[] = { &dp_kernel_ops, &dp_null_ops };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(name, all[i]->name) == 0)
			return all[i];
	return NULL;
}
