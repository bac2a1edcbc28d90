import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ToolnexusInboxModule, ToolnexusModule, ToolnexusModuleError } from 'toolnexus-ts/nest';

/** ToolnexusInboxModule set-up mistakes fail at boot, before the app serves anything (docs/operating.md, "Inbox"). */
describe('ToolnexusInboxModule', () => {
  it('needs ToolnexusModule in the same application', async () => {
    @Module({ imports: [ToolnexusInboxModule.forRoot({ authorize: 'none-local-only' })] })
    class Alone {}
    const app = await NestFactory.create(Alone, { logger: false });
    try {
      await expect(app.init()).rejects.toThrow(ToolnexusModuleError);
      await expect(app.init()).rejects.toThrow(/needs ToolnexusModule/);
    } finally {
      await app.close();
    }
  });

  it('refuses missing options, and a path that is not a plain URL path', async () => {
    expect(() => ToolnexusInboxModule.forRoot(null as never)).toThrow(ToolnexusModuleError);
    @Module({ imports: [ToolnexusModule.forRoot({}), ToolnexusInboxModule.forRoot({ path: 'in box?', authorize: 'none-local-only' })] })
    class BadPath {}
    const app = await NestFactory.create(BadPath, { logger: false });
    try {
      await expect(app.init()).rejects.toThrow(/path must be a plain URL path such as "inbox", got "in box\?"/);
    } finally {
      await app.close();
    }
  });
});
