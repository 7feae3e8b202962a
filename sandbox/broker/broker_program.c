/* The broker program embedded in libsbx (broker_process.h): main() only. */
#include "sandbox/broker/broker_process.h"

int main(void) {
  sbx_broker_process_main();
}
