import t from 'tap';
import { MAX_ERROR_MESSAGE_BYTES, boundError, type JobError } from '../../daemon/model/job.js';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

t.test('a message within the bound is kept as it is', async (t) => {
  const exact: JobError = { code: 'ENGINE_EXIT_NONZERO', message: 'a'.repeat(MAX_ERROR_MESSAGE_BYTES) };
  t.equal(boundError(exact), exact);
  t.same(boundError({ code: 'TIMEOUT', message: '' }), { code: 'TIMEOUT', message: '' });
});

t.test('a longer message is cut to the bound and ends with an ellipsis; the code is kept', async (t) => {
  const cut = boundError({ code: 'ENGINE_EXIT_NONZERO', message: `engine exited with code 1: ${'x'.repeat(10 * MAX_ERROR_MESSAGE_BYTES)}` });
  t.equal(cut.code, 'ENGINE_EXIT_NONZERO');
  t.equal(bytes(cut.message), MAX_ERROR_MESSAGE_BYTES);
  t.ok(cut.message.startsWith('engine exited with code 1: xxx'));
  t.ok(cut.message.endsWith('…'));
});

t.test('the cut never splits a character', async (t) => {
  for (const unit of ['é', '✓', '😀']) {
    for (let pad = 0; pad < 4; pad += 1) {
      const cut = boundError({ code: 'OUTPUT_INVALID', message: 'p'.repeat(pad) + unit.repeat(MAX_ERROR_MESSAGE_BYTES) });
      t.ok(bytes(cut.message) <= MAX_ERROR_MESSAGE_BYTES, `${unit} pad ${pad}: within the bound`);
      t.notOk(cut.message.includes('\ufffd'), `${unit} pad ${pad}: no replacement character`);
      t.equal(cut.message.slice(0, -1), 'p'.repeat(pad) + unit.repeat((cut.message.length - 1 - pad) / unit.length), `${unit} pad ${pad}: whole characters only`);
    }
  }
});
