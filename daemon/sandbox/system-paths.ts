import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isWithin } from '../../rpc/within-folder.js';

/**
 * What of the host's system a sandbox shows, read-only, so that the engines and the tools they
 * run work: the installed programs and libraries, and a short list of `/etc`. Measured with the
 * real Codex, Gemini CLI and Claude Code and with git, python3, node, curl and rg (docs/sandbox.md,
 * "What the system shows"); everything else of the host (`/home`, `/root`, `/srv`, `/opt`,
 * `/var`, `/run`, `/mnt`, `/media`, the rest of `/etc`) is not there.
 */

/** The programs and libraries. On a merged-/usr system the others are links into /usr. */
const PROGRAMS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/**
 * `/etc`, by allow-list: name resolution, TLS roots, time zones, the dynamic linker's cache,
 * Debian's alternatives (`awk`, `editor` are links through them), MIME and `file` magic. Not
 * shown: passwords and keys (`shadow`, `ssl/private`, `ssh`), host identity (`machine-id`),
 * registry settings that may hold tokens (`npmrc`, `pip.conf`), `environment`, login scripts, the
 * engines' admin settings (`codex`, `gemini-cli`, `claude-code`), the daemon's own (`skilld`).
 */
export const ETC_SHOWN = [
  'hosts', 'resolv.conf', 'nsswitch.conf', 'gai.conf', 'host.conf', 'protocols', 'services',
  'ssl/certs', 'ssl/openssl.cnf', 'ca-certificates', 'ca-certificates.conf', 'pki/tls/certs', 'pki/ca-trust',
  'localtime', 'timezone', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives',
  'os-release', 'mtab', 'mime.types', 'magic', 'magic.mime',
] as const;

/** A system path as the host has it: a folder or file shown at its own path, or a link made again inside. */
export type SystemPath = { kind: 'bind'; path: string } | { kind: 'link'; path: string; target: string };

/** What the host holds at a path; injected in tests. */
export interface HostLook {
  /** 'link' with its target, 'present', or 'absent'. */
  at(path: string): { kind: 'link'; target: string } | { kind: 'present' } | { kind: 'absent' };
  /** The path with its links resolved; null where it leads nowhere. */
  real(path: string): string | null;
}

export const HOST: HostLook = {
  at(path) {
    try {
      return lstatSync(path).isSymbolicLink() ? { kind: 'link', target: readlinkSync(path) } : { kind: 'present' };
    } catch {
      return { kind: 'absent' };
    }
  },
  real(path) {
    try {
      return realpathSync(path);
    } catch {
      return null;
    }
  },
};

/** Where a link's target may lie for the link itself to be made inside: it then leads where it does outside. */
const LINKS_MAY_LEAD = ['/usr', '/proc'];

/**
 * The system paths of this host a sandbox shows, in order. A link (`/bin -> usr/bin`,
 * `/etc/localtime -> /usr/share/zoneinfo/…`) is made again when it leads into `/usr` or `/proc`;
 * another (`/etc/resolv.conf -> /run/…`) is shown as the file it leads to, at its own path.
 */
export function systemPaths(look: HostLook = HOST): SystemPath[] {
  const paths: SystemPath[] = [];
  for (const path of [...PROGRAMS, ...ETC_SHOWN.map((name) => `/etc/${name}`)]) {
    const found = look.at(path);
    if (found.kind === 'absent') continue;
    if (found.kind === 'present') {
      paths.push({ kind: 'bind', path });
      continue;
    }
    const lands = resolve(dirname(path), found.target);
    if (LINKS_MAY_LEAD.some((place) => isWithin(place, lands))) paths.push({ kind: 'link', path, target: found.target });
    else if (look.real(path) !== null) paths.push({ kind: 'bind', path });
  }
  return paths;
}
