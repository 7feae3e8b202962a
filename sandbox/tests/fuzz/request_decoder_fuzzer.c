/* libFuzzer target: the broker's request decoder on arbitrary datagrams.
 * An accepted request must have the shape the handlers rely on: ATTACH
 * (transport) is the bare header, LISTENER the header and a pid, and a
 * command is one the table admits with exactly its paths, as the client's
 * pre-check asks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/broker/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sbx_broker_request_view v;
  const char *why = NULL;
  if (sbx_broker_decode_request(data, size, &v, &why) != 0) {
    if (!why)
      abort();
    return 0;
  }
  const char *end = (const char *)data + size;
  if (v.command == SBX_BROKER_ATTACH) {
    if (v.path || v.path2 || v.flags || v.arg ||
        size != sizeof(sbx_broker_request))
      abort();
    return 0;
  }
  if (v.command == SBX_BROKER_LISTENER) {
    if (v.path || v.path2 || v.flags || v.arg == 0 || v.arg > INT32_MAX ||
        size != sizeof(sbx_broker_request))
      abort();
    return 0;
  }
  unsigned paths = sbx_broker_command_paths(v.command);
  if (paths == 0)
    abort();
  if (!v.path || v.path + v.path_len >= end || v.path[v.path_len] != '\0' ||
      strlen(v.path) != v.path_len)
    abort();
  if (paths == 2) {
    if (!v.path2 || v.path2 + v.path2_len >= end ||
        strlen(v.path2) != v.path2_len)
      abort();
  } else if (v.path2) {
    abort();
  }
  if (sbx_broker_command_refusal(v.command, paths, v.flags, v.arg))
    abort();
  return 0;
}
