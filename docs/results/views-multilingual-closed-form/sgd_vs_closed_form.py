"""Is it the objective, the encoder class or the optimiser? (docs/results.md, "Why SGD
stopped short of the closed form"). numpy, independent of prh: Adam on the spectral loss
(batch 128 images x 5 captions, warmup 50, cosine), over linear maps 4000 -> 128 of either
idf-weighted L2-normalised word counts (MODE=tfidf, the closed form's features) or the mean
of the caption's word one-hots (MODE=mean, a bag of embeddings without LayerNorm). Scored
on val: English vs German mutual 10-NN of caption 1. Nothing reads test_2016.
  MODE=mean LR=6e-3 STEPS=800 python3 sgd_vs_closed_form.py
Data: PRH_DATA or ../shared/data. Needs ~6 GB of memory (dense features).
"""
import sys, os, numpy as np
sys.argv=['x','4000','1','val']
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)),'val_sweep.py')).read().split("V=int(sys.argv[1])")[0])
mode=os.environ.get('MODE','tfidf')  # tfidf | mean | l2 (features_as)
steps=int(os.environ.get('STEPS','800')); lr=float(os.environ.get('LR','6e-3')); d=128
res={}
for lang in ['en','de']:
    tr=load('train',lang); voc=vocab(tr,4000)
    idf=idf_weights(tr,voc)
    Ftr=np.stack([features_as(mode,c,voc,idf) for c in tr],1)  # [n,5,V]
    te=load('val',lang); Xv=features_as(mode,te[0],voc,idf)
    res[lang]=(Ftr,Xv)
    print(lang,Ftr.shape,flush=True)
rng=np.random.default_rng(0)
Ws={}
for lang in res:
    Ftr,Xv=res[lang]; n=Ftr.shape[0]
    W=rng.normal(0,0.02 if mode=='tfidf' else 1.0,(4000,d)).astype(np.float32)
    m=np.zeros_like(W); v=np.zeros_like(W); b1,b2=0.9,0.999
    for t in range(1,steps+1):
        idx=rng.choice(n,128,replace=False); X=Ftr[idx]  # [N,5,V]
        N,Vv,_=X.shape
        F=X@W  # N,5,d
        S=F.sum(1)
        pos=((S**2).sum()-(F**2).sum())/(N*Vv*(Vv-1))
        Fl=F.reshape(-1,d); mu=Fl.mean(0); M=Fl.T@Fl/len(Fl)
        loss=-2*pos+2*mu@mu+(M**2).sum()
        dF=-2*2*(S[:,None,:]-F)/(N*Vv*(Vv-1)) + 4*mu/len(Fl) + (4*Fl@M/len(Fl)).reshape(N,Vv,d)
        g=np.einsum('nvk,nvd->kd',X,dF)
        lr_t=lr*min(1,t/50)*0.5*(1+np.cos(np.pi*t/steps))
        m=b1*m+(1-b1)*g; v=b2*v+(1-b2)*g*g
        W-=lr_t*(m/(1-b1**t))/(np.sqrt(v/(1-b2**t))+1e-8)
        if t%200==0: print(lang,t,f'loss {loss:.4f} pos {pos:.4f}',flush=True)
    Ws[lang]=W
en=res['en'][1]@Ws['en']; de=res['de'][1]@Ws['de']
print(mode,steps,lr,'val en-de',round(mknn(en,de),3),flush=True)
