/** Console sessions expire (idle and absolute), cookies parse strictly, templates escape. */
import { describe, expect, it } from 'vitest';
import { html, raw } from '../../src/console/html.ts';
import { cookieOf, csrfMatches, operatorOfKey, Sessions } from '../../src/console/session.ts';
import { createHash } from 'node:crypto';

describe('console sessions', () => {
  it('expire after the idle limit, and after the absolute limit however active', () => {
    let now = 0;
    const s = new Sessions({ idleMs: 1000, absoluteMs: 5000, max: 10 }, () => now);
    const { id } = s.create('ops');
    now = 999;
    expect(s.get(id)?.operator).toBe('ops');
    now = 2000; // 1001 ms idle
    expect(s.get(id)).toBeUndefined();
    expect(s.get(id)).toBeUndefined(); // dropped, not revived
    const b = s.create('ops').id;
    for (now = 2500; now <= 7000; now += 500) expect(s.get(b)?.operator, `at ${now}`).toBe(now - 2000 <= 5000 ? 'ops' : undefined);
  });

  it('a live stream checking `alive` does not keep a session alive', () => {
    let now = 0;
    const s = new Sessions({ idleMs: 1000, absoluteMs: 5000, max: 10 }, () => now);
    const { id } = s.create('ops');
    for (now = 100; now <= 1000; now += 100) expect(s.alive(id)).toBe(true);
    now = 1001;
    expect(s.alive(id)).toBe(false);
  });

  it('keeps at most `max` sessions (oldest dropped) and never reuses an id', () => {
    const s = new Sessions({ idleMs: 1e9, absoluteMs: 1e9, max: 2 });
    const a = s.create('a').id;
    const b = s.create('b').id;
    const c = s.create('c').id;
    expect(new Set([a, b, c]).size).toBe(3);
    expect(s.get(a)).toBeUndefined();
    expect(s.get(c)?.operator).toBe('c');
    s.destroy(c);
    expect(s.get(c)).toBeUndefined();
  });

  it('matches CSRF tokens exactly', () => {
    const { session } = new Sessions().create('ops');
    expect(csrfMatches(session, session.csrf)).toBe(true);
    expect(csrfMatches(session, session.csrf.slice(1))).toBe(false);
    expect(csrfMatches(session, undefined)).toBe(false);
    expect(csrfMatches(session, [session.csrf])).toBe(false);
  });

  it('finds the operator by key digest only', () => {
    const keys = [{ id: 'ops', apiKeySha256: createHash('sha256').update('k1').digest('hex') }];
    expect(operatorOfKey(keys, 'k1')).toBe('ops');
    expect(operatorOfKey(keys, 'k2')).toBeUndefined();
    expect(operatorOfKey(keys, keys[0]!.apiKeySha256)).toBeUndefined();
  });

  it('reads one cookie by exact name', () => {
    expect(cookieOf('a=1; baton_console=x; baton_console_pre=y', 'baton_console')).toBe('x');
    expect(cookieOf('xbaton_console=z', 'baton_console')).toBeUndefined();
    expect(cookieOf(undefined, 'baton_console')).toBeUndefined();
  });
});

describe('console templates', () => {
  it('escape every interpolated value; only Html passes through', () => {
    const evil = `<script>alert("x")</script>' onload='x`;
    expect(html`<td title="${evil}">${evil}</td>`.value).toBe('<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;x">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;x</td>');
    expect(html`<p>${[html`<b>${'<i>'}</b>`, raw('<hr>'), null, undefined, false, 3]}</p>`.value).toBe('<p><b>&lt;i&gt;</b><hr>3</p>');
  });
});
