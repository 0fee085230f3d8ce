// Builds each chain's treasury signer from configuration: the key from the environment, or the key in the PKCS#11
// token. pkcs11js (a native addon) is loaded only when a pkcs11 signer is configured. A problem an operator has to
// fix (a wrong label, PIN or library) stops start-up as a ConfigError naming the variable.
import type { Logger } from 'pino';
import { ConfigError, envName, type ChainSettings, type Config, type Pkcs11Settings } from '../../config.js';
import { createEthereumKeySigner, createSolanaKeySigner } from './key.js';
import { SignerError, type EthereumSigner, type SolanaSigner } from './port.js';

/** The signer of an EVM chain's treasury (any of them: an EVM key signs for every EVM chain it is configured for). */
export async function createEthereumSigner(config: Config, chain: ChainSettings, log: Logger): Promise<EthereumSigner> {
  if (chain.signer === 'key') return createEthereumKeySigner(chain.treasuryKey!);
  const { openPkcs11EthereumSigner } = await import('./pkcs11/ethereum.js');
  const keyLabel = chain.pkcs11KeyLabel!;
  const signer = await asConfigError(() => openPkcs11EthereumSigner({ ...tokenOptions(config.pkcs11!, log), keyLabel, setting: `${envName(chain.name)}_PKCS11_KEY_LABEL` }));
  log.info({ chain: chain.name, token: config.pkcs11!.tokenLabel, keyLabel, address: signer.address }, 'treasury key in the PKCS#11 token');
  return signer;
}

export async function createSolanaSigner(config: Config, chain: ChainSettings, log: Logger): Promise<SolanaSigner> {
  if (chain.signer === 'key') return createSolanaKeySigner(chain.treasuryKey!);
  const { openPkcs11SolanaSigner } = await import('./pkcs11/solana.js');
  const keyLabel = chain.pkcs11KeyLabel!;
  const signer = await asConfigError(() => openPkcs11SolanaSigner({ ...tokenOptions(config.pkcs11!, log), keyLabel }));
  log.info({ chain: 'solana', token: config.pkcs11!.tokenLabel, keyLabel, address: signer.address }, 'treasury key in the PKCS#11 token');
  return signer;
}

function tokenOptions(settings: Pkcs11Settings, log: Logger) {
  return {
    modulePath: settings.module,
    tokenLabel: settings.tokenLabel,
    pin: settings.pin,
    timeoutSeconds: settings.timeoutSeconds,
    logger: log.child({ component: 'pkcs11' }),
  };
}

async function asConfigError<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof SignerError && error.setting) {
      throw new ConfigError(error.setting, error.details ? `${error.shortMessage} (${error.details})` : error.shortMessage);
    }
    throw error;
  }
}
