/* capsule/capsule_int.h: pieces capsule.c shares with capsule/exec_capsule.c
 * (not for callers outside capsule/): the landlock ABI structures Debian
 * 12's headers lack, and the idmapping of a detached mount. */
#ifndef WORLD_CAPSULE_INT_H
#define WORLD_CAPSULE_INT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Landlock ABI structures, carried here (Debian 12 headers stop at ABI 1). */
#define WORLD_LL_RULE_PATH_BENEATH 1
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
struct world_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};
struct world_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* Idmap the detached mount tree (MOUNT_ATTR_IDMAP) through a user namespace
 * mapping owner uid/gid to host_id, so the capsule's host id reads (and, on
 * a writable mount, writes) as the owner. Root only. 0, or -1 with note
 * saying why not (the tree is left as it was). */
int capsule_idmap_tree(int tree, uid_t uid, gid_t gid, unsigned host_id, char *note, size_t len);
/* The same for several trees of one owner (one user namespace for all). */
int capsule_idmap_trees(const int *trees, size_t ntrees, uid_t uid, gid_t gid, unsigned host_id, char *note,
                        size_t len);
#endif
