/**
 * One typed definition per node (nodes/definitions.ts): the HTML the editor loads carries the
 * registerType block built from it, the runtime reads its TypedInput defaults and credentials
 * from it, and nothing is left to a hand-written copy.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFINITIONS, NODE_SET, typedSettings } from '../nodes/definitions';
import { helper, load, unload } from './support/red';

const DIST_NODES = join(__dirname, '..', 'nodes');

/** Runs the registerType block of a built HTML file against a stand-in RED and returns what it registered. */
function registered(type: string): { type: string; def: Record<string, any> } {
  const html = readFileSync(join(DIST_NODES, `${NODE_SET}.html`), 'utf8');
  // The node set's HTML holds one block per type: this type's.
  const blocks = [
    ...html.matchAll(/<script type="text\/javascript">\s*(RED\.nodes\.registerType\([\s\S]*?)<\/script>/g),
  ].filter((b) => (b[1] as string).startsWith(`RED.nodes.registerType('${type}'`));
  assert.equal(blocks.length, 1, `${type}: one literal registerType block`);
  let got: { type: string; def: Record<string, any> } | undefined;
  const RED = {
    nodes: { registerType: (t: string, def: Record<string, any>) => (got = { type: t, def }) },
    validators: { number: () => () => true },
  };
  new Function('RED', (blocks[0] as RegExpMatchArray)[1] as string)(RED);
  assert.ok(got);
  return got;
}

describe('node definitions: one typed source per node', () => {
  afterEach(() => unload());

  for (const [type, definition] of Object.entries(DEFINITIONS)) {
    it(`${type}: the HTML registers every setting of the definition, with its TypedInput type, checks and credentials`, () => {
      const { type: registeredType, def } = registered(type);
      assert.equal(registeredType, type);
      const expected = Object.keys(definition.settings).flatMap((name) =>
        definition.settings[name]?.typed ? [name, `${name}Type`] : [name],
      );
      assert.deepEqual(Object.keys(def.defaults), expected);
      for (const [name, setting] of Object.entries(definition.settings)) {
        assert.deepEqual(def.defaults[name].value, setting.value, `${name} default`);
        if (setting.typed) assert.equal(def.defaults[`${name}Type`].value, setting.typed.type, `${name}Type default`);
        assert.equal(typeof def.defaults[name].validate, setting.validate ? 'function' : 'undefined', `${name} check`);
        assert.equal(def.defaults[name].required, setting.required, `${name} required`);
      }
      assert.deepEqual(def.credentials, definition.credentials);
      assert.equal(def.category, definition.category);
      assert.equal(def.outputs, definition.outputs);
      assert.equal(typeof def.oneditprepare, 'function');
    });
  }

  it('the runtime takes the TypedInput defaults and the credentials from the same definitions', async () => {
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(typedSettings('bulkgate-transactional')).map(([k, v]) => [k, `${v.type}:${v.value}`]),
      ),
      {
        number: 'msg:number',
        admin: 'num:',
        variables: 'msg:variables',
        sender_id_value: 'str:',
        country: 'str:',
        schedule: 'msg:schedule',
      },
    );
    await load([{ id: 'acc', type: 'bulkgate-account' }]);
    const nodes = (helper as unknown as { _redNodes: { getCredentialDefinition(type: string): unknown } })._redNodes;
    assert.deepEqual(nodes.getCredentialDefinition('bulkgate-account'), DEFINITIONS['bulkgate-account']?.credentials);
    assert.deepEqual(nodes.getCredentialDefinition('bulkgate-events'), DEFINITIONS['bulkgate-events']?.credentials);
  });
});
