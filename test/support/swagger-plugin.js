// ts-jest AST transformer running the @nestjs/swagger CLI plugin with the options of nest-cli.json.
const { before } = require('@nestjs/swagger/plugin');
const nestCli = require('../../nest-cli.json');

const options = nestCli.compilerOptions.plugins.find((p) => p.name === '@nestjs/swagger').options;

module.exports = {
  name: 'nestjs-swagger-plugin',
  version: 1,
  factory: (tsCompiler) => before(options, tsCompiler.program),
};
