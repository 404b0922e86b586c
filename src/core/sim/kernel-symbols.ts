import type { Rng } from './random.ts';

/**
 * A synthetic kernel for generated captures: real function names laid out at addresses as a
 * linker would, call chains of real subsystems, and stacks made of return addresses into them.
 */

/** Tasks of the synthetic system: the COMM-PID column of generated traces and simulator runs. */
export const TASKS: readonly { comm: string; pid: number }[] = [
  { comm: 'surfaceflinger', pid: 612 },
  { comm: 'system_server', pid: 1403 },
  { comm: 'kworker/u8:2', pid: 88 },
  { comm: 'binder:1403_4', pid: 1577 },
  { comm: 'RenderThread', pid: 2290 },
  { comm: 'logd.writer', pid: 431 },
  { comm: 'irq/42-e1000', pid: 77 },
  { comm: 'sh', pid: 3101 },
];

/** The comm of a synthetic task's pid, `<...>` (as ftrace prints an unknown comm) otherwise. */
export function commOf(pid: number): string {
  return TASKS.find((t) => t.pid === pid)?.comm ?? '<...>';
}

export interface KernelSymbol {
  name: string;
  addr: bigint;
  size: number;
  module: string | null;
  /** return-address offsets of the calls this function makes */
  callSites: number[];
}

// outermost first; each chain ends at the event's own function (the leaf)
const ALLOC_CHAINS: string[][] = [
  [
    'entry_SYSCALL_64_after_hwframe',
    'do_syscall_64',
    '__x64_sys_openat',
    'do_sys_openat2',
    'do_filp_open',
    'path_openat',
    'alloc_empty_file',
    'init_file',
    'kmem_cache_alloc',
  ],
  ['entry_SYSCALL_64_after_hwframe', 'do_syscall_64', '__x64_sys_read', 'ksys_read', 'vfs_read', 'seq_read_iter', 'kmalloc_trace', '__kmalloc'],
  [
    'entry_SYSCALL_64_after_hwframe',
    'do_syscall_64',
    '__x64_sys_write',
    'ksys_write',
    'vfs_write',
    'ext4_file_write_iter',
    'ext4_buffered_write_iter',
    'generic_perform_write',
    'ext4_da_write_begin',
    '__filemap_get_folio',
    'filemap_alloc_folio',
    '__alloc_pages',
  ],
  ['entry_SYSCALL_64_after_hwframe', 'do_syscall_64', '__x64_sys_clone', 'kernel_clone', 'copy_process', 'dup_task_struct', 'kmem_cache_alloc_node'],
  [
    'entry_SYSCALL_64_after_hwframe',
    'do_syscall_64',
    '__x64_sys_mmap',
    'ksys_mmap_pgoff',
    'vm_mmap_pgoff',
    'do_mmap',
    'mmap_region',
    'vm_area_alloc',
    'kmem_cache_alloc',
  ],
  [
    'entry_SYSCALL_64_after_hwframe',
    'do_syscall_64',
    '__x64_sys_sendto',
    '__sys_sendto',
    'sock_sendmsg',
    'tcp_sendmsg',
    'tcp_sendmsg_locked',
    'tcp_stream_alloc_skb',
    '__alloc_skb',
    'kmem_cache_alloc_node',
  ],
  [
    'ret_from_fork',
    'kthread',
    'worker_thread',
    'process_one_work',
    'ext4_end_io_rsv_work',
    'ext4_convert_unwritten_io_end_vec',
    'ext4_map_blocks',
    'ext4_es_insert_extent',
    'kmem_cache_alloc',
  ],
  [
    'asm_common_interrupt',
    'common_interrupt',
    '__common_interrupt',
    'handle_edge_irq',
    'handle_irq_event',
    'e1000_intr',
    'napi_schedule_prep',
    '__napi_alloc_skb',
    '__kmalloc',
  ],
  [
    'entry_SYSCALL_64_after_hwframe',
    'do_syscall_64',
    '__x64_sys_epoll_wait',
    'do_epoll_wait',
    'ep_poll',
    'schedule_hrtimeout_range',
    'hrtimer_init_sleeper',
    'kmalloc_trace',
    '__kmalloc',
  ],
  [
    'asm_exc_page_fault',
    'exc_page_fault',
    'do_user_addr_fault',
    'handle_mm_fault',
    '__handle_mm_fault',
    'do_anonymous_page',
    'vma_alloc_folio',
    '__folio_alloc',
    '__alloc_pages',
  ],
];

const WAKEUP_CHAINS: string[][] = [
  ['entry_SYSCALL_64_after_hwframe', 'do_syscall_64', '__x64_sys_futex', 'do_futex', 'futex_wake', 'wake_up_q', 'try_to_wake_up'],
  ['asm_sysvec_apic_timer_interrupt', 'sysvec_apic_timer_interrupt', 'hrtimer_interrupt', '__hrtimer_run_queues', 'hrtimer_wakeup', 'try_to_wake_up'],
  [
    'ret_from_fork',
    'kthread',
    'worker_thread',
    'process_one_work',
    'blk_mq_complete_request',
    'ext4_end_bio',
    'wake_up_bit',
    '__wake_up_common',
    'try_to_wake_up',
  ],
  [
    'asm_common_interrupt',
    'common_interrupt',
    '__common_interrupt',
    'handle_edge_irq',
    'handle_irq_event',
    'e1000_intr',
    'napi_schedule_prep',
    'raise_softirq_irqoff',
    'wakeup_softirqd',
    'try_to_wake_up',
  ],
];

const MODULES: Record<string, string> = {
  e1000_intr: 'e1000',
  ext4_end_io_rsv_work: 'ext4',
  ext4_convert_unwritten_io_end_vec: 'ext4',
  ext4_map_blocks: 'ext4',
  ext4_es_insert_extent: 'ext4',
  ext4_file_write_iter: 'ext4',
  ext4_buffered_write_iter: 'ext4',
  ext4_da_write_begin: 'ext4',
  ext4_end_bio: 'ext4',
};

export class SyntheticKernel {
  readonly symbols: KernelSymbol[] = [];
  private byName = new Map<string, KernelSymbol>();
  readonly allocChains = ALLOC_CHAINS;
  readonly wakeupChains = WAKEUP_CHAINS;

  constructor(rng: Rng) {
    const names = [...new Set([...ALLOC_CHAINS, ...WAKEUP_CHAINS].flat())];
    let core = 0xffffffff81000000n;
    let mod = 0xffffffffc0a00000n;
    for (const name of names) {
      const size = rng.range(4, 64) * 16;
      const module = MODULES[name] ?? null;
      const sites = Array.from({ length: rng.range(1, 3) }, () => rng.range(2, size / 4 - 1) * 4);
      const sym: KernelSymbol = { name, addr: module ? mod : core, size, module, callSites: [...new Set(sites)] };
      if (module) mod += BigInt(size + rng.range(0, 8) * 16);
      else core += BigInt(size + rng.range(0, 8) * 16);
      this.symbols.push(sym);
      this.byName.set(name, sym);
    }
  }

  get(name: string): KernelSymbol {
    return this.byName.get(name)!;
  }

  /** `/proc/kallsyms` as root reads it: core symbols as T, module symbols as t with [module]. */
  kallsyms(): string {
    return [...this.symbols]
      .sort((a, b) => (a.addr < b.addr ? -1 : 1))
      .map((s) => `${s.addr.toString(16)} ${s.module ? 't' : 'T'} ${s.name}${s.module ? `\t[${s.module}]` : ''}\n`)
      .join('');
  }

  /** How the trace prints a frame with sym-offset on: `sym+0xoff/0xsize [module]`. */
  printFrame(ip: bigint): string {
    const s = this.symbols.find((x) => ip >= x.addr && ip < x.addr + BigInt(x.size));
    if (!s) return '0x' + ip.toString(16);
    return `${s.name}+0x${(ip - s.addr).toString(16)}/0x${s.size.toString(16)}${s.module ? ` [${s.module}]` : ''}`;
  }
}

/** A stack as the kernel unwinds it: return addresses, leaf first. */
export function makeStack(kernel: SyntheticKernel, chain: readonly string[], rng: Rng): BigUint64Array {
  const ips = new BigUint64Array(chain.length);
  for (let i = 0; i < chain.length; i++) {
    const sym = kernel.get(chain[chain.length - 1 - i]);
    ips[i] = sym.addr + BigInt(rng.pick(sym.callSites));
  }
  return ips;
}
