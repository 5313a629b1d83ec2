// How an ACP permission request becomes an approval, and how a decision becomes its answer.
import t from 'tap';
import type { PermissionOption, RequestPermissionRequest, ToolCallUpdate } from '@agentclientprotocol/sdk';
import { APPROVAL_SUMMARY_MAX_CHARS, PendingApprovals, approvalOf, permissionOutcome } from '../../daemon/engines/acp/permissions.js';

function request(toolCall: ToolCallUpdate): RequestPermissionRequest {
  return { sessionId: 's', options: [], toolCall };
}

t.test('the kind follows the tool kind: execute is a command, edits, deletes and moves change files, the rest are tools', async (t) => {
  const kinds = (['execute', 'edit', 'delete', 'move', 'read', 'fetch'] as const).map((kind) => approvalOf('1', request({ toolCallId: 'c', kind, title: 'x' })).kind);
  t.same(kinds, ['command', 'file_change', 'file_change', 'file_change', 'tool', 'tool']);
  t.equal(approvalOf('1', request({ toolCallId: 'c', title: 'x' })).kind, 'tool', 'no kind at all');
});

t.test('the summary: the title on one line, else the raw input, else the call id; a file change names its files', async (t) => {
  t.equal(approvalOf('1', request({ toolCallId: 'c', kind: 'execute', title: 'ls \n  -la' })).summary, 'ls -la');
  t.equal(approvalOf('1', request({ toolCallId: 'c', rawInput: { pattern: 'TODO' } })).summary, '{"pattern":"TODO"}');
  t.equal(approvalOf('1', request({ toolCallId: 'call_7' })).summary, 'call_7');
  const edit = approvalOf('1', request({ toolCallId: 'c', kind: 'edit', title: 'Edit a.ts', locations: [{ path: '/w/a.ts' }, { path: '/w/b.ts' }] }));
  t.equal(edit.summary, 'Edit a.ts (/w/a.ts, /w/b.ts)');
  t.equal(approvalOf('1', request({ toolCallId: 'c', kind: 'edit', title: 'Edit /w/a.ts', locations: [{ path: '/w/a.ts' }] })).summary, 'Edit /w/a.ts', 'a path the title names is not repeated');
  const long = approvalOf('1', request({ toolCallId: 'c', title: '✓'.repeat(APPROVAL_SUMMARY_MAX_CHARS + 5) })).summary;
  t.equal([...long].length, APPROVAL_SUMMARY_MAX_CHARS);
  t.ok(long.endsWith('…'));
});

t.test('the answer: allow picks allow-once (never allow-always), deny reject-once else reject-always, else cancelled', async (t) => {
  const option = (optionId: string, kind: PermissionOption['kind']): PermissionOption => ({ optionId, name: optionId, kind });
  const all = [option('always', 'allow_always'), option('once', 'allow_once'), option('no', 'reject_once'), option('never', 'reject_always')];
  t.same(permissionOutcome(all, 'allow'), { outcome: { outcome: 'selected', optionId: 'once' } });
  t.same(permissionOutcome(all, 'deny'), { outcome: { outcome: 'selected', optionId: 'no' } });
  t.same(permissionOutcome([option('never', 'reject_always')], 'deny'), { outcome: { outcome: 'selected', optionId: 'never' } });
  t.same(permissionOutcome([option('always', 'allow_always')], 'allow'), { outcome: { outcome: 'cancelled' } });
  t.same(permissionOutcome(all, null), { outcome: { outcome: 'cancelled' } });
});

t.test('pending approvals: answered once by id, unknown ids ignored, cancelAll answers the rest with null', async (t) => {
  const pending = new PendingApprovals();
  const [a, b] = [pending.nextId(), pending.nextId()];
  t.not(a, b);
  const first = pending.wait(a);
  const second = pending.wait(b);
  pending.answer(a, 'allow');
  pending.answer(a, 'deny');
  pending.answer('unknown', 'deny');
  pending.cancelAll();
  t.equal(await first, 'allow');
  t.equal(await second, null);
});
