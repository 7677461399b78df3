/* The thread-safe set of shim.h, shared by the files that remember handles or addresses. */
#include "shim.h"

void shim_set_add(struct shim_set *s, uintptr_t p) {
  if (!p) return;
  pthread_mutex_lock(&s->lock);
  size_t free_slot = SHIM_SET_SLOTS;
  int found = 0;
  for (size_t i = 0; i < SHIM_SET_SLOTS && !found; i++) {
    found = s->v[i] == p;
    if (!s->v[i] && free_slot == SHIM_SET_SLOTS) free_slot = i;
  }
  if (!found && free_slot < SHIM_SET_SLOTS) s->v[free_slot] = p;
  pthread_mutex_unlock(&s->lock);
}

int shim_set_has(struct shim_set *s, uintptr_t p) {
  int found = 0;
  if (!p) return 0;
  pthread_mutex_lock(&s->lock);
  for (size_t i = 0; i < SHIM_SET_SLOTS && !found; i++) found = s->v[i] == p;
  pthread_mutex_unlock(&s->lock);
  return found;
}

void shim_set_del(struct shim_set *s, uintptr_t p) {
  if (!p) return;
  pthread_mutex_lock(&s->lock);
  for (size_t i = 0; i < SHIM_SET_SLOTS; i++)
    if (s->v[i] == p) s->v[i] = 0;
  pthread_mutex_unlock(&s->lock);
}
