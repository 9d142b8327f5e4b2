import { describe, expect, it } from 'vitest';
import { actionOf, cardIdOfUri, responseKey, topicOfCommand } from '../../src/modules/players-mqtt/commands.js';
import { deviceOfUsername, maySubscribe, publicationOf, type Grant } from '../../src/modules/players-mqtt/topics.js';

/** The players' MQTT rights and command mapping (src/modules/players-mqtt/topics.ts, commands.ts), as pure functions. */

const member = (scopes: string[]): Grant => ({ principal: { userId: 'u1', scopes: new Set(scopes) }, familyId: 'f1' });
const player: Grant = { principal: { userId: 'u1', scopes: new Set(['family:library:view', 'device:player']), player: { deviceId: 'p1', credentialId: 'c1' } }, familyId: 'f1' };
const family = (id: string): boolean => id === 'p1' || id === 'p2';
const payload = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('players over MQTT: rights', () => {
  it.each([
    ['p1?x-amz-customauthorizer-name=PublicJWTAuthorizer', 'p1'],
    ['_?x-amz-customauthorizer-name=PublicJWTAuthorizer', undefined],
    ['p2', 'p2'],
    ['', undefined],
    [undefined, undefined],
  ])('the user name %j names device %j', (username, device) => {
    expect(deviceOfUsername(username)).toBe(device);
  });

  it.each([
    ['device/p1/data/events', true, false],
    ['device/p1/#', true, false],
    ['device/p1/command/card/start', true, true],
    ['device/p1/command/#', true, true],
    ['device/p3/data/events', false, false],
    ['device/+/data/events', false, false],
    ['#', false, false],
    ['$cardshelf/inbox/#', false, false],
  ])('%s: a member may subscribe: %s; the player p1: %s', (topic, forMember, forPlayer) => {
    expect(maySubscribe(member(['family:library:view']), topic, family)).toBe(forMember);
    expect(maySubscribe(player, topic, family)).toBe(forPlayer);
  });

  it('lets a manager command the family\'s players, a viewer nothing, a player its own data topics alone', () => {
    const manager = member(['family:library:manage']);
    expect(publicationOf(manager, 'device/p2/command/card/stop', family)).toEqual({ kind: 'command', deviceId: 'p2', command: 'card/stop' });
    expect(publicationOf(manager, 'device/p3/command/card/stop', family)).toHaveProperty('refused');
    expect(publicationOf(manager, 'device/p2/data/status', family)).toHaveProperty('refused');
    expect(publicationOf(manager, 'device/+/command/card/stop', family)).toHaveProperty('refused');
    expect(publicationOf(member(['family:library:view']), 'device/p2/command/card/stop', family)).toHaveProperty('refused');
    expect(publicationOf(player, 'device/p1/data/events', family)).toEqual({ kind: 'report', deviceId: 'p1', data: 'data/events' });
    expect(publicationOf(player, 'device/p1/command/card/stop', family)).toHaveProperty('refused');
    expect(publicationOf(player, 'device/p2/data/events', family)).toHaveProperty('refused');
  });
});

describe('players over MQTT: commands', () => {
  it.each([
    ['https://yoto.io/abc12', 'abc12'],
    ['abc12', 'abc12'],
    ['https://yoto.io/abc12?x=1', undefined],
    ['https://yoto.io/', undefined],
  ])('the card of %s is %s', (uri, id) => {
    expect(cardIdOfUri(uri)).toBe(id);
  });

  it.each([
    ['card/start', payload({ uri: 'https://yoto.io/abc12', chapterKey: '01', secondsIn: 3, cutOff: 60 }), { do: 'command', command: { command: 'card-play', cardId: 'abc12', chapterKey: '01', secondsIn: 3, cutOff: 60 } }],
    ['card/stop', Buffer.alloc(0), { do: 'command', command: { command: 'stop' } }],
    ['card/pause', Buffer.alloc(0), { do: 'command', command: { command: 'pause' } }],
    ['card/resume', Buffer.alloc(0), { do: 'command', command: { command: 'resume' } }],
    ['volume/set', payload({ volume: 40 }), { do: 'command', command: { command: 'volume', volume: 40 } }],
    ['sleep-timer/set', payload({ seconds: 600 }), { do: 'command', command: { command: 'sleep-timer', seconds: 600 } }],
    ['events/request', Buffer.alloc(0), { do: 'report', report: 'events' }],
    ['status/request', Buffer.alloc(0), { do: 'report', report: 'status' }],
    ['status', payload({ requestId: 'r1' }), { do: 'report', report: 'status-full', requestId: 'r1' }],
  ])('%s does what the documentation says', (command, body, action) => {
    expect(JSON.parse(JSON.stringify(actionOf(command, body)))).toEqual(action);
  });

  it.each([
    ['reboot', Buffer.alloc(0), /rebooted/],
    ['ambients/set', payload({ r: 1, g: 2, b: 3 }), /ambient/],
    ['bluetooth/on', Buffer.alloc(0), /Bluetooth/],
    ['display/brightness', Buffer.alloc(0), /no command/],
    ['volume/set', payload({ volume: 101 }), /volume/],
    ['volume/set', Buffer.from('{'), /not JSON/],
    ['card/start', payload({ uri: 'https://yoto.io/a b' }), /names no card/],
    ['sleep-timer/set', payload({ seconds: -1 }), /seconds/],
  ])('%s with a payload it cannot take is refused, saying why', (command, body, why) => {
    const action = actionOf(command, body);
    expect(action.do).toBe('refuse');
    expect(action.do === 'refuse' ? action.why : '').toMatch(why);
  });

  it('answers each command under its resource, and maps commands back to their topics', () => {
    expect(['card/start', 'volume/set', 'sleep-timer/set', 'status/request'].map(responseKey)).toEqual(['card', 'volume', 'sleepTimer', 'status']);
    expect(topicOfCommand({ command: 'card-play', cardId: 'abc12', trackKey: '02' })).toEqual({ command: 'card/start', payload: { uri: 'https://yoto.io/abc12', trackKey: '02' } });
    expect(topicOfCommand({ command: 'volume', volume: 10 })).toEqual({ command: 'volume/set', payload: { volume: 10 } });
    expect(topicOfCommand({ command: 'next' })).toBeUndefined();
  });
});
