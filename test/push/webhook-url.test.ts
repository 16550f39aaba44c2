import { describe, expect, it } from 'vitest';
import { addressAllowed, checkWebhookUrl, DEFAULT_WEBHOOK_POLICY, type WebhookPolicy } from '../../src/push/webhook-url.ts';
import { expectCode } from '../helpers/errors.ts';

const LOOPBACK_ALLOWED: WebhookPolicy = { allowHttp: false, allow: ['127.0.0.0/8', '::1/128'] };

// Every refused range, probed at its first, an inner and its last address.
const REFUSED: ReadonlyArray<[range: string, probes: string[]]> = [
  ['0.0.0.0/8', ['0.0.0.0', '0.1.2.3', '0.255.255.255']],
  ['10.0.0.0/8', ['10.0.0.0', '10.1.2.3', '10.255.255.255']],
  ['100.64.0.0/10', ['100.64.0.0', '100.100.100.100', '100.127.255.255']],
  ['127.0.0.0/8', ['127.0.0.0', '127.0.0.1', '127.255.255.255']],
  ['169.254.0.0/16', ['169.254.0.0', '169.254.169.254', '169.254.255.255']],
  ['172.16.0.0/12', ['172.16.0.0', '172.20.1.1', '172.31.255.255']],
  ['192.0.0.0/24', ['192.0.0.0', '192.0.0.8', '192.0.0.255']],
  ['192.0.2.0/24', ['192.0.2.0', '192.0.2.1', '192.0.2.255']],
  ['192.88.99.0/24', ['192.88.99.0', '192.88.99.1', '192.88.99.255']],
  ['192.168.0.0/16', ['192.168.0.0', '192.168.1.1', '192.168.255.255']],
  ['198.18.0.0/15', ['198.18.0.0', '198.19.1.1', '198.19.255.255']],
  ['198.51.100.0/24', ['198.51.100.0', '198.51.100.7', '198.51.100.255']],
  ['203.0.113.0/24', ['203.0.113.0', '203.0.113.9', '203.0.113.255']],
  ['224.0.0.0/4', ['224.0.0.0', '239.1.2.3', '239.255.255.255']],
  ['240.0.0.0/4', ['240.0.0.0', '250.1.2.3', '255.255.255.255']],
  ['::/128', ['::', '0:0:0:0:0:0:0:0']],
  ['::1/128', ['::1', '0:0:0:0:0:0:0:1']],
  ['fc00::/7', ['fc00::', 'fd12:3456::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fe80::/10', ['fe80::', 'fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['ff00::/8', ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2001:db8::/32', ['2001:db8::', '2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['100::/64', ['100::', '100::1', '100::ffff:ffff:ffff:ffff']],
  // Beyond the list: Teredo, RFC 9637 docs, site-local, local-use NAT64, outside 2000::/3.
  ['2001::/32', ['2001::', '2001:0:4136:e378:8000:63bf:3fff:fdd2']],
  ['3fff::/20', ['3fff::1', '3fff:fff:ffff::1']],
  ['fec0::/10', ['fec0::1']],
  ['64:ff9b:1::/48', ['64:ff9b:1::808:808']],
  ['not 2000::/3', ['4000::1', '::8.8.8.8', '1::1']],
  // IPv4 inside IPv6: the embedded address decides.
  ['::ffff:0:0/96 (mapped, dotted)', ['::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '0:0:0:0:0:ffff:192.168.0.1']],
  ['::ffff:0:0/96 (mapped, hex)', ['::ffff:7f00:1', '::ffff:a00:1', '::ffff:a9fe:a9fe', '::FFFF:C0A8:1']],
  ['64:ff9b::/96 (NAT64)', ['64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '64:ff9b::a00:1', '64:ff9b::a9fe:a9fe']],
  ['2002::/16 (6to4)', ['2002:7f00:1::', '2002:a00:1::1', '2002:c0a8:101:1::1', '2002:a9fe:a9fe::']],
  ['zone ids', ['fe80::1%eth0', '2606:4700::1111%1']],
  ['not an IP', ['', 'example.com', '1.2.3', '127.1', '::ffff:1.2.3.256', '1.2.3.4/32']],
];

const PUBLIC = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.216.34',
  '9.255.255.255', // just below 10/8
  '11.0.0.0', // just above
  '100.63.255.255', // below 100.64/10
  '100.128.0.0', // above
  '172.15.255.255', // below 172.16/12
  '172.32.0.0', // above
  '192.0.1.1',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255', // last before multicast
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2001:db9::1', // just past 2001:db8::/32
  '2001:1::1', // past Teredo
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::808:808', // NAT64 of 8.8.8.8
  '64:ff9b::1.1.1.1',
  '2002:808:808::1', // 6to4 of 8.8.8.8
];

describe('addressAllowed: refused by default', () => {
  for (const [range, probes] of REFUSED) {
    it.each(probes)(`${range}: %s`, (ip) => {
      expect(addressAllowed(ip, DEFAULT_WEBHOOK_POLICY)).toBe(false);
      expect(addressAllowed(ip)).toBe(false);
    });
  }
});

describe('addressAllowed: public unicast passes', () => {
  it.each(PUBLIC)('%s', (ip) => {
    expect(addressAllowed(ip, DEFAULT_WEBHOOK_POLICY)).toBe(true);
  });
});

describe('addressAllowed: the allow list', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true], // mapped loopback is loopback
    ['::ffff:7f00:1', true],
    ['10.0.0.1', false],
    ['169.254.169.254', false],
    ['fe80::1', false],
    ['::', false],
    ['0.0.0.0', false],
    ['64:ff9b::7f00:1', false], // NAT64 reaches the gateway's loopback, not ours
    ['2002:7f00:1::', false],
    ['1.1.1.1', true],
  ] as const)('loopback allow-list: %s → %s', (ip, allowed) => {
    expect(addressAllowed(ip, LOOPBACK_ALLOWED)).toBe(allowed);
  });

  it('takes bare addresses and narrow CIDRs', () => {
    const policy: WebhookPolicy = { allowHttp: false, allow: ['10.1.2.3', '192.168.7.0/24', 'fd00::/8'] };
    expect(addressAllowed('10.1.2.3', policy)).toBe(true);
    expect(addressAllowed('10.1.2.4', policy)).toBe(false);
    expect(addressAllowed('192.168.7.200', policy)).toBe(true);
    expect(addressAllowed('192.168.8.1', policy)).toBe(false);
    expect(addressAllowed('fd00::1', policy)).toBe(true);
    expect(addressAllowed('fc00::1', policy)).toBe(false);
  });

  it('never admits a zone id, even inside an allowed range', () => {
    expect(addressAllowed('fe80::1%eth0', { allowHttp: false, allow: ['fe80::/10'] })).toBe(false);
  });

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/8/8', 'example.com/8', '10.0.0.0/x', 'fe80::1%eth0/128', ''])(
    'rejects a malformed entry: %j',
    (entry) => {
      expectCode(() => addressAllowed('1.1.1.1', { allowHttp: false, allow: [entry] }), 'invalid_request');
    },
  );
});

describe('checkWebhookUrl', () => {
  it('accepts an https URL to a public name or address, and returns it parsed', () => {
    const url = checkWebhookUrl('https://hooks.example.com:8443/a2a/push?tenant=t1');
    expect(url.href).toBe('https://hooks.example.com:8443/a2a/push?tenant=t1');
    expect(checkWebhookUrl('https://93.184.216.34/x').hostname).toBe('93.184.216.34');
    expect(checkWebhookUrl('https://[2606:4700:4700::1111]/x').hostname).toBe('[2606:4700:4700::1111]');
  });

  it.each([
    ['not a URL', 'not a url'],
    ['relative', '/hooks/push'],
    ['empty', ''],
    ['bad IPv6', 'https://[::1/'],
    ['IPv6 with zone id', 'https://[fe80::1%25eth0]/'],
    ['too long', `https://hooks.example.com/${'a'.repeat(2048)}`],
  ])('invalid_request: %s', (_why, raw) => {
    expectCode(() => checkWebhookUrl(raw), 'invalid_request');
  });

  it.each([
    ['http by default', 'http://hooks.example.com/'],
    ['ftp', 'ftp://hooks.example.com/'],
    ['file', 'file:///etc/passwd'],
    ['data', 'data:text/plain,hi'],
    ['javascript', 'javascript:alert(1)'],
    ['ws', 'wss://hooks.example.com/'],
    ['user and password', 'https://user:secret@hooks.example.com/'],
    ['user only', 'https://user@hooks.example.com/'],
    ['password only', 'https://:secret@hooks.example.com/'],
    ['fragment', 'https://hooks.example.com/#frag'],
    ['empty fragment', 'https://hooks.example.com/#'],
    ['loopback v4', 'https://127.0.0.1/'],
    ['loopback v4, other /8 address', 'https://127.1.2.3:8443/'],
    ['loopback v4, hex short form', 'https://0x7f.1/'],
    ['loopback v4, decimal', 'https://2130706433/'],
    ['loopback v4, octal', 'https://0177.0.0.1/'],
    ['loopback v4, trailing dot', 'https://127.0.0.1./'],
    ['loopback v6', 'https://[::1]/'],
    ['loopback v6, long form', 'https://[0:0:0:0:0:0:0:1]/'],
    ['unspecified', 'https://0.0.0.0/'],
    ['unspecified, shortest', 'https://0/'],
    ['metadata', 'https://169.254.169.254/latest/meta-data/'],
    ['private', 'https://10.0.0.1/'],
    ['private', 'https://192.168.1.1/'],
    ['mapped loopback, dotted', 'https://[::ffff:127.0.0.1]/'],
    ['mapped loopback, hex', 'https://[::ffff:7f00:1]/'],
    ['mapped metadata', 'https://[::ffff:169.254.169.254]/'],
    ['NAT64 loopback', 'https://[64:ff9b::127.0.0.1]/'],
    ['6to4 private', 'https://[2002:c0a8:101::1]/'],
    ['unique local', 'https://[fd00::1]/'],
    ['link-local v6', 'https://[fe80::1]/'],
    ['broadcast', 'https://255.255.255.255/'],
    ['localhost', 'https://localhost/'],
    ['localhost, upper case', 'https://LOCALHOST:8443/'],
    ['localhost, trailing dot', 'https://localhost./'],
    ['localhost, full-width (IDNA-mapped)', 'https://ｌｏｃａｌｈｏｓｔ/'],
    ['*.localhost', 'https://api.localhost/'],
    ['*.localhost, nested', 'https://a.b.localhost./'],
  ])('deny: %s', (_why, raw) => {
    expectCode(() => checkWebhookUrl(raw), 'deny');
  });

  it('treats names merely containing "localhost" as ordinary hostnames', () => {
    expect(checkWebhookUrl('https://localhost.example.com/').hostname).toBe('localhost.example.com');
    expect(checkWebhookUrl('https://notlocalhost/').hostname).toBe('notlocalhost');
  });

  it('allows http only when the policy says so', () => {
    expect(checkWebhookUrl('http://hooks.example.com/', { allowHttp: true, allow: [] }).protocol).toBe('http:');
    expectCode(() => checkWebhookUrl('ftp://hooks.example.com/', { allowHttp: true, allow: [] }), 'deny');
  });

  it('re-admits loopback literals and localhost names when the allow list names loopback', () => {
    const policy: WebhookPolicy = { ...LOOPBACK_ALLOWED, allowHttp: true };
    for (const raw of ['http://127.0.0.1:9/', 'https://127.0.0.2/', 'https://[::1]:8443/', 'https://[::ffff:127.0.0.1]/', 'https://localhost/', 'https://x.localhost/']) {
      expect(checkWebhookUrl(raw, policy)).toBeInstanceOf(URL);
    }
    // Only v4 loopback listed: localhost still passes (it may resolve to 127.0.0.1), [::1] does not.
    const v4only: WebhookPolicy = { allowHttp: false, allow: ['127.0.0.0/8'] };
    expect(checkWebhookUrl('https://localhost/', v4only).hostname).toBe('localhost');
    expectCode(() => checkWebhookUrl('https://[::1]/', v4only), 'deny');
    // Loopback listed does not re-admit anything else.
    expectCode(() => checkWebhookUrl('https://10.0.0.1/', policy), 'deny');
    expectCode(() => checkWebhookUrl('https://user:pw@127.0.0.1/', policy), 'deny');
  });

  it('never echoes the URL or its credentials', () => {
    const secret = 's3cr3t-token';
    for (const raw of [`https://user:${secret}@hooks.example.com/`, `https://127.0.0.1/?token=${secret}`, `http://hooks.example.com/${secret}`, `https://h/#${secret}`, `not a url ${secret}`]) {
      let thrown: unknown;
      try {
        checkWebhookUrl(raw);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeDefined();
      const text = JSON.stringify(thrown) + String((thrown as Error).message);
      expect(text).not.toContain(secret);
    }
  });
});
