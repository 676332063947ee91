// The official TypeScript SDK 2.x Skills client (SEP-2640, `@modelcontextprotocol/client/ext/skills`)
// against our `everything` server over Streamable HTTP at 2026-07-28: the listing, one skill
// got, its SKILL.md and a file read and verified by the SDK (size, digest, frontmatter), a
// directory read, an unknown skill refused. One `ok - ...` / `not ok - ...` line per check,
// then `N passed, M failed`.
//
//   node skills_client.mjs --http <url>
//
// Exit code 0 only if every check passed. Run by `cargo xtask interop`.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

const CHECK_TIMEOUT_MS = 10_000;

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describe(error) {
  return error instanceof Error ? error.message.replace(/\n/g, ' | ') : String(error);
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

const GREETING = 'skill://greeting/SKILL.md';

const checks = [
  {
    name: 'the extension declared, with directoryRead',
    run: async (skills) => {
      assert(skills.supported, 'not supported');
      assert(skills.directoryRead, 'no directoryRead');
    },
  },
  {
    name: 'skills/list: both skills, valid entries, cache fields',
    run: async (skills) => {
      const listing = await skills.list();
      const uris = listing.skills.map((s) => s.uri);
      assert(
        JSON.stringify(uris) === JSON.stringify(['skill://acme/changelog/SKILL.md', GREETING]),
        `uris ${JSON.stringify(uris)}`,
      );
      assert(listing.invalid.length === 0, `invalid ${JSON.stringify(listing.invalid)}`);
      return `${uris.length} skills`;
    },
  },
  {
    name: 'skills/get, then SKILL.md read and verified (size, digest, frontmatter)',
    run: async (skills) => {
      const { skill } = await skills.get(GREETING);
      const file = await skills.read(skill);
      assert(file.verified, 'not verified');
      assert(file.frontmatter?.name === 'greeting', `frontmatter ${JSON.stringify(file.frontmatter)}`);
      assert(file.body?.includes('# Greeting'), `body ${file.body}`);
    },
  },
  {
    name: 'a supporting file read and verified',
    run: async (skills) => {
      const { skill } = await skills.get(GREETING);
      const file = await skills.read(skill, 'references/TONE.md');
      assert(file.verified && file.text?.startsWith('# Tone'), `file ${JSON.stringify(file.text)}`);
    },
  },
  {
    name: 'resources/directory/read: the skill root lists its subdirectories',
    run: async (skills) => {
      const { resources } = await skills.readDirectory('skill://greeting');
      const dirs = resources.filter((r) => r.mimeType === 'inode/directory').map((r) => r.uri);
      assert(dirs.includes('skill://greeting/references'), `children ${JSON.stringify(resources)}`);
    },
  },
  {
    name: 'skills/get of an unknown skill fails',
    run: async (skills) => {
      let failed = false;
      try {
        await skills.get('skill://nobody/SKILL.md');
      } catch {
        failed = true;
      }
      assert(failed, 'an unknown skill was answered');
    },
  },
];

async function main() {
  const [flag, url] = process.argv.slice(2);
  if (flag !== '--http' || !url) {
    console.error('usage: node skills_client.mjs --http <url>');
    process.exit(2);
  }
  const client = new Client(
    { name: 'mcp-rust-sdk-interop-ts2-skills', version: '0.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  let passed = 0;
  let failed = 0;
  try {
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(url))), CHECK_TIMEOUT_MS);
  } catch (error) {
    console.log(`not ok - connect (server/discover): ${describe(error)}`);
    console.log(`0 passed, ${1 + checks.length} failed`);
    process.exit(1);
  }
  const skills = new SkillsClient(client);
  for (const check of checks) {
    try {
      const note = await withTimeout(check.run(skills), CHECK_TIMEOUT_MS);
      console.log(`ok - ${check.name}${note ? ` (${note})` : ''}`);
      passed += 1;
    } catch (error) {
      console.log(`not ok - ${check.name}: ${describe(error)}`);
      failed += 1;
    }
  }
  await withTimeout(client.close(), CHECK_TIMEOUT_MS).catch((error) => console.log(`# close: ${describe(error)}`));
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

main().catch((error) => {
  console.log(`not ok - harness: ${describe(error)}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
